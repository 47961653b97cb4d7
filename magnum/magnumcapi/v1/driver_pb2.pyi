from buf.validate import validate_pb2 as _validate_pb2
from magnumcapi.v1 import magnum_pb2 as _magnum_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClusterSpec(_message.Message):
    __slots__ = ["cluster", "cluster_template", "nodegroups"]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
    NODEGROUPS_FIELD_NUMBER: _ClassVar[int]
    cluster: _magnum_pb2.Cluster
    cluster_template: _magnum_pb2.ClusterTemplate
    nodegroups: _containers.RepeatedCompositeFieldContainer[_magnum_pb2.NodeGroup]
    def __init__(self, cluster: _Optional[_Union[_magnum_pb2.Cluster, _Mapping]] = ..., cluster_template: _Optional[_Union[_magnum_pb2.ClusterTemplate, _Mapping]] = ..., nodegroups: _Optional[_Iterable[_Union[_magnum_pb2.NodeGroup, _Mapping]]] = ...) -> None: ...

class ClusterStatus(_message.Message):
    __slots__ = ["api_address", "coe_version", "nodegroups", "status", "status_reason"]
    API_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    COE_VERSION_FIELD_NUMBER: _ClassVar[int]
    NODEGROUPS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    api_address: str
    coe_version: str
    nodegroups: _containers.RepeatedCompositeFieldContainer[NodeGroupStatus]
    status: str
    status_reason: str
    def __init__(self, status: _Optional[str] = ..., status_reason: _Optional[str] = ..., api_address: _Optional[str] = ..., coe_version: _Optional[str] = ..., nodegroups: _Optional[_Iterable[_Union[NodeGroupStatus, _Mapping]]] = ...) -> None: ...

class CreateClusterRequest(_message.Message):
    __slots__ = ["certificates", "context", "spec"]
    CERTIFICATES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    certificates: _magnum_pb2.CertificateAuthorities
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., certificates: _Optional[_Union[_magnum_pb2.CertificateAuthorities, _Mapping]] = ...) -> None: ...

class CreateClusterResponse(_message.Message):
    __slots__ = ["stack_id"]
    STACK_ID_FIELD_NUMBER: _ClassVar[int]
    stack_id: str
    def __init__(self, stack_id: _Optional[str] = ...) -> None: ...

class CreateNodeGroupRequest(_message.Message):
    __slots__ = ["context", "nodegroup_uuid", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    NODEGROUP_UUID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    nodegroup_uuid: str
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., nodegroup_uuid: _Optional[str] = ...) -> None: ...

class CreateNodeGroupResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DeleteClusterRequest(_message.Message):
    __slots__ = ["context", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class DeleteClusterResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class DeleteNodeGroupRequest(_message.Message):
    __slots__ = ["context", "nodegroup_uuid", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    NODEGROUP_UUID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    nodegroup_uuid: str
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., nodegroup_uuid: _Optional[str] = ...) -> None: ...

class DeleteNodeGroupResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetClusterHealthRequest(_message.Message):
    __slots__ = ["spec"]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: ClusterSpec
    def __init__(self, spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class GetClusterHealthResponse(_message.Message):
    __slots__ = ["health_status", "health_status_reason"]
    class HealthStatusReasonEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    HEALTH_STATUS_FIELD_NUMBER: _ClassVar[int]
    HEALTH_STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    health_status: str
    health_status_reason: _containers.ScalarMap[str, str]
    def __init__(self, health_status: _Optional[str] = ..., health_status_reason: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GetClusterStatusRequest(_message.Message):
    __slots__ = ["spec"]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: ClusterSpec
    def __init__(self, spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class GetClusterStatusResponse(_message.Message):
    __slots__ = ["status"]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: ClusterStatus
    def __init__(self, status: _Optional[_Union[ClusterStatus, _Mapping]] = ...) -> None: ...

class NodeGroupStatus(_message.Message):
    __slots__ = ["destroy", "name", "node_addresses", "node_count", "status", "status_reason", "uuid"]
    DESTROY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    destroy: bool
    name: str
    node_addresses: _containers.RepeatedScalarFieldContainer[str]
    node_count: int
    status: str
    status_reason: str
    uuid: str
    def __init__(self, uuid: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[str] = ..., status_reason: _Optional[str] = ..., node_count: _Optional[int] = ..., node_addresses: _Optional[_Iterable[str]] = ..., destroy: bool = ...) -> None: ...

class RenderValuesRequest(_message.Message):
    __slots__ = ["context", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class RenderValuesResponse(_message.Message):
    __slots__ = ["chart_version", "deployed", "diff", "values_yaml", "warnings"]
    CHART_VERSION_FIELD_NUMBER: _ClassVar[int]
    DEPLOYED_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    VALUES_YAML_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    chart_version: str
    deployed: bool
    diff: str
    values_yaml: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values_yaml: _Optional[str] = ..., diff: _Optional[str] = ..., deployed: bool = ..., chart_version: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class ResizeClusterRequest(_message.Message):
    __slots__ = ["context", "node_count", "nodegroup_uuid", "nodes_to_remove", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    NODEGROUP_UUID_FIELD_NUMBER: _ClassVar[int]
    NODES_TO_REMOVE_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    node_count: int
    nodegroup_uuid: str
    nodes_to_remove: _containers.RepeatedScalarFieldContainer[str]
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., nodegroup_uuid: _Optional[str] = ..., node_count: _Optional[int] = ..., nodes_to_remove: _Optional[_Iterable[str]] = ...) -> None: ...

class ResizeClusterResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RotateCACertificateRequest(_message.Message):
    __slots__ = ["certificates", "context", "spec"]
    CERTIFICATES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    certificates: _magnum_pb2.CertificateAuthorities
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., certificates: _Optional[_Union[_magnum_pb2.CertificateAuthorities, _Mapping]] = ...) -> None: ...

class RotateCACertificateResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class RotateCredentialRequest(_message.Message):
    __slots__ = ["context", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class RotateCredentialResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class UpdateClusterRequest(_message.Message):
    __slots__ = ["context", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ...) -> None: ...

class UpdateClusterResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class UpdateNodeGroupRequest(_message.Message):
    __slots__ = ["context", "nodegroup_uuid", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    NODEGROUP_UUID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    nodegroup_uuid: str
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., nodegroup_uuid: _Optional[str] = ...) -> None: ...

class UpdateNodeGroupResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class UpgradeClusterRequest(_message.Message):
    __slots__ = ["context", "max_batch_size", "nodegroup_uuid", "spec"]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    NODEGROUP_UUID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    context: _magnum_pb2.RequestContext
    max_batch_size: int
    nodegroup_uuid: str
    spec: ClusterSpec
    def __init__(self, context: _Optional[_Union[_magnum_pb2.RequestContext, _Mapping]] = ..., spec: _Optional[_Union[ClusterSpec, _Mapping]] = ..., max_batch_size: _Optional[int] = ..., nodegroup_uuid: _Optional[str] = ...) -> None: ...

class UpgradeClusterResponse(_message.Message):
    __slots__ = ["coe_version"]
    COE_VERSION_FIELD_NUMBER: _ClassVar[int]
    coe_version: str
    def __init__(self, coe_version: _Optional[str] = ...) -> None: ...
