from buf.validate import validate_pb2 as _validate_pb2
from magnumcapi.v1 import options_pb2 as _options_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CertificateAuthorities(_message.Message):
    __slots__ = ["ca", "etcd_ca", "front_proxy_ca", "service_account"]
    CA_FIELD_NUMBER: _ClassVar[int]
    ETCD_CA_FIELD_NUMBER: _ClassVar[int]
    FRONT_PROXY_CA_FIELD_NUMBER: _ClassVar[int]
    SERVICE_ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    ca: KeyPair
    etcd_ca: KeyPair
    front_proxy_ca: KeyPair
    service_account: KeyPair
    def __init__(self, ca: _Optional[_Union[KeyPair, _Mapping]] = ..., etcd_ca: _Optional[_Union[KeyPair, _Mapping]] = ..., front_proxy_ca: _Optional[_Union[KeyPair, _Mapping]] = ..., service_account: _Optional[_Union[KeyPair, _Mapping]] = ...) -> None: ...

class Cluster(_message.Message):
    __slots__ = ["api_address", "cluster_template_id", "coe_version", "container_version", "create_timeout", "created_at", "docker_volume_size", "fixed_network", "fixed_subnet", "flavor_id", "floating_ip_enabled", "health_status", "health_status_reason", "keypair", "labels", "master_count", "master_flavor_id", "master_lb_enabled", "name", "node_count", "project_id", "stack_id", "status", "status_reason", "updated_at", "user_id", "uuid"]
    class HealthStatusReasonEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    API_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_TEMPLATE_ID_FIELD_NUMBER: _ClassVar[int]
    COE_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    DOCKER_VOLUME_SIZE_FIELD_NUMBER: _ClassVar[int]
    FIXED_NETWORK_FIELD_NUMBER: _ClassVar[int]
    FIXED_SUBNET_FIELD_NUMBER: _ClassVar[int]
    FLAVOR_ID_FIELD_NUMBER: _ClassVar[int]
    FLOATING_IP_ENABLED_FIELD_NUMBER: _ClassVar[int]
    HEALTH_STATUS_FIELD_NUMBER: _ClassVar[int]
    HEALTH_STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    KEYPAIR_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    MASTER_COUNT_FIELD_NUMBER: _ClassVar[int]
    MASTER_FLAVOR_ID_FIELD_NUMBER: _ClassVar[int]
    MASTER_LB_ENABLED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    STACK_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    api_address: str
    cluster_template_id: str
    coe_version: str
    container_version: str
    create_timeout: int
    created_at: str
    docker_volume_size: int
    fixed_network: str
    fixed_subnet: str
    flavor_id: str
    floating_ip_enabled: bool
    health_status: str
    health_status_reason: _containers.ScalarMap[str, str]
    keypair: str
    labels: _containers.ScalarMap[str, str]
    master_count: int
    master_flavor_id: str
    master_lb_enabled: bool
    name: str
    node_count: int
    project_id: str
    stack_id: str
    status: str
    status_reason: str
    updated_at: str
    user_id: str
    uuid: str
    def __init__(self, uuid: _Optional[str] = ..., name: _Optional[str] = ..., project_id: _Optional[str] = ..., user_id: _Optional[str] = ..., cluster_template_id: _Optional[str] = ..., keypair: _Optional[str] = ..., docker_volume_size: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., master_flavor_id: _Optional[str] = ..., flavor_id: _Optional[str] = ..., stack_id: _Optional[str] = ..., status: _Optional[str] = ..., status_reason: _Optional[str] = ..., create_timeout: _Optional[int] = ..., api_address: _Optional[str] = ..., coe_version: _Optional[str] = ..., container_version: _Optional[str] = ..., fixed_network: _Optional[str] = ..., fixed_subnet: _Optional[str] = ..., floating_ip_enabled: bool = ..., master_lb_enabled: bool = ..., master_count: _Optional[int] = ..., node_count: _Optional[int] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., health_status: _Optional[str] = ..., health_status_reason: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ClusterTemplate(_message.Message):
    __slots__ = ["apiserver_port", "cluster_distro", "coe", "dns_nameserver", "docker_storage_driver", "docker_volume_size", "driver", "external_network_id", "fixed_network", "fixed_subnet", "flavor_id", "floating_ip_enabled", "hidden", "http_proxy", "https_proxy", "image_id", "insecure_registry", "keypair_id", "labels", "master_flavor_id", "master_lb_enabled", "name", "network_driver", "no_proxy", "project_id", "public", "registry_enabled", "server_type", "tags", "tls_disabled", "user_id", "uuid", "volume_driver"]
    class LabelsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    APISERVER_PORT_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_DISTRO_FIELD_NUMBER: _ClassVar[int]
    COE_FIELD_NUMBER: _ClassVar[int]
    DNS_NAMESERVER_FIELD_NUMBER: _ClassVar[int]
    DOCKER_STORAGE_DRIVER_FIELD_NUMBER: _ClassVar[int]
    DOCKER_VOLUME_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    FIXED_NETWORK_FIELD_NUMBER: _ClassVar[int]
    FIXED_SUBNET_FIELD_NUMBER: _ClassVar[int]
    FLAVOR_ID_FIELD_NUMBER: _ClassVar[int]
    FLOATING_IP_ENABLED_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_FIELD_NUMBER: _ClassVar[int]
    HTTPS_PROXY_FIELD_NUMBER: _ClassVar[int]
    HTTP_PROXY_FIELD_NUMBER: _ClassVar[int]
    IMAGE_ID_FIELD_NUMBER: _ClassVar[int]
    INSECURE_REGISTRY_FIELD_NUMBER: _ClassVar[int]
    KEYPAIR_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    MASTER_FLAVOR_ID_FIELD_NUMBER: _ClassVar[int]
    MASTER_LB_ENABLED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NETWORK_DRIVER_FIELD_NUMBER: _ClassVar[int]
    NO_PROXY_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_FIELD_NUMBER: _ClassVar[int]
    REGISTRY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    SERVER_TYPE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TLS_DISABLED_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_DRIVER_FIELD_NUMBER: _ClassVar[int]
    apiserver_port: int
    cluster_distro: str
    coe: str
    dns_nameserver: str
    docker_storage_driver: str
    docker_volume_size: int
    driver: str
    external_network_id: str
    fixed_network: str
    fixed_subnet: str
    flavor_id: str
    floating_ip_enabled: bool
    hidden: bool
    http_proxy: str
    https_proxy: str
    image_id: str
    insecure_registry: str
    keypair_id: str
    labels: _containers.ScalarMap[str, str]
    master_flavor_id: str
    master_lb_enabled: bool
    name: str
    network_driver: str
    no_proxy: str
    project_id: str
    public: bool
    registry_enabled: bool
    server_type: str
    tags: str
    tls_disabled: bool
    user_id: str
    uuid: str
    volume_driver: str
    def __init__(self, uuid: _Optional[str] = ..., name: _Optional[str] = ..., project_id: _Optional[str] = ..., user_id: _Optional[str] = ..., image_id: _Optional[str] = ..., flavor_id: _Optional[str] = ..., master_flavor_id: _Optional[str] = ..., keypair_id: _Optional[str] = ..., dns_nameserver: _Optional[str] = ..., external_network_id: _Optional[str] = ..., fixed_network: _Optional[str] = ..., fixed_subnet: _Optional[str] = ..., network_driver: _Optional[str] = ..., volume_driver: _Optional[str] = ..., apiserver_port: _Optional[int] = ..., docker_volume_size: _Optional[int] = ..., docker_storage_driver: _Optional[str] = ..., cluster_distro: _Optional[str] = ..., coe: _Optional[str] = ..., http_proxy: _Optional[str] = ..., https_proxy: _Optional[str] = ..., no_proxy: _Optional[str] = ..., registry_enabled: bool = ..., labels: _Optional[_Mapping[str, str]] = ..., tls_disabled: bool = ..., public: bool = ..., server_type: _Optional[str] = ..., insecure_registry: _Optional[str] = ..., master_lb_enabled: bool = ..., floating_ip_enabled: bool = ..., hidden: bool = ..., driver: _Optional[str] = ..., tags: _Optional[str] = ...) -> None: ...

class KeyPair(_message.Message):
    __slots__ = ["certificate", "private_key"]
    CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_KEY_FIELD_NUMBER: _ClassVar[int]
    certificate: str
    private_key: str
    def __init__(self, certificate: _Optional[str] = ..., private_key: _Optional[str] = ...) -> None: ...

class NodeGroup(_message.Message):
    __slots__ = ["cluster_id", "created_at", "docker_volume_size", "flavor_id", "image_id", "is_default", "labels", "max_node_count", "min_node_count", "name", "node_addresses", "node_count", "node_labels", "node_taints", "project_id", "role", "stack_id", "status", "status_reason", "updated_at", "uuid", "version"]
    class LabelsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class NodeLabelsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DOCKER_VOLUME_SIZE_FIELD_NUMBER: _ClassVar[int]
    FLAVOR_ID_FIELD_NUMBER: _ClassVar[int]
    IMAGE_ID_FIELD_NUMBER: _ClassVar[int]
    IS_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    MAX_NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    MIN_NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_ADDRESSES_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    NODE_LABELS_FIELD_NUMBER: _ClassVar[int]
    NODE_TAINTS_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    STACK_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_REASON_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    UUID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    cluster_id: str
    created_at: str
    docker_volume_size: int
    flavor_id: str
    image_id: str
    is_default: bool
    labels: _containers.ScalarMap[str, str]
    max_node_count: int
    min_node_count: int
    name: str
    node_addresses: _containers.RepeatedScalarFieldContainer[str]
    node_count: int
    node_labels: _containers.ScalarMap[str, str]
    node_taints: _containers.RepeatedCompositeFieldContainer[NodeGroupTaint]
    project_id: str
    role: str
    stack_id: str
    status: str
    status_reason: str
    updated_at: str
    uuid: str
    version: str
    def __init__(self, uuid: _Optional[str] = ..., name: _Optional[str] = ..., cluster_id: _Optional[str] = ..., project_id: _Optional[str] = ..., docker_volume_size: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., flavor_id: _Optional[str] = ..., image_id: _Optional[str] = ..., node_addresses: _Optional[_Iterable[str]] = ..., node_count: _Optional[int] = ..., role: _Optional[str] = ..., max_node_count: _Optional[int] = ..., min_node_count: _Optional[int] = ..., is_default: bool = ..., stack_id: _Optional[str] = ..., status: _Optional[str] = ..., status_reason: _Optional[str] = ..., version: _Optional[str] = ..., node_labels: _Optional[_Mapping[str, str]] = ..., node_taints: _Optional[_Iterable[_Union[NodeGroupTaint, _Mapping]]] = ..., created_at: _Optional[str] = ..., updated_at: _Optional[str] = ...) -> None: ...

class NodeGroupTaint(_message.Message):
    __slots__ = ["effect", "key", "value"]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    effect: str
    key: str
    value: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ...) -> None: ...

class RequestContext(_message.Message):
    __slots__ = ["auth_token", "auth_url", "is_admin", "project_id", "region_name", "request_id", "user_id"]
    AUTH_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AUTH_URL_FIELD_NUMBER: _ClassVar[int]
    IS_ADMIN_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    REGION_NAME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    auth_token: str
    auth_url: str
    is_admin: bool
    project_id: str
    region_name: str
    request_id: str
    user_id: str
    def __init__(self, auth_token: _Optional[str] = ..., auth_url: _Optional[str] = ..., user_id: _Optional[str] = ..., project_id: _Optional[str] = ..., region_name: _Optional[str] = ..., request_id: _Optional[str] = ..., is_admin: bool = ...) -> None: ...
