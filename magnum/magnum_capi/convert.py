"""Magnum objects to the proto messages, field for field.

The proto mirrors Magnum's object fields by name, so conversion is a loop over
the message's fields. Fields a Magnum release lacks (ClusterTemplate.driver
before 18, NodeGroup.node_labels before master) are simply left unset, which
is what lets one shim serve Magnum 15 through master.
"""

import datetime

from oslo_config import cfg

from magnumcapi.v1 import driver_pb2
from magnumcapi.v1 import magnum_pb2

CONF = cfg.CONF

_UNSET = object()


def _value(obj, name):
    """obj.name if the object has it and it is set; _UNSET otherwise.

    Magnum objects raise for unset fields and lazy-load some; fields missing
    from older releases are not attributes at all.
    """
    fields = getattr(obj, "fields", None)
    if fields is not None and name in fields:
        if hasattr(obj, "obj_attr_is_set") and not obj.obj_attr_is_set(name):
            if name not in getattr(obj, "obj_extra_fields", ()):
                return _UNSET
        value = getattr(obj, name, None)
    else:
        value = getattr(obj, name, _UNSET)
    return _UNSET if value is None else value


def _timestamp(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def _fill(message, obj, skip=()):
    """Copy every field of message that obj has, converting types."""
    for field in message.DESCRIPTOR.fields:
        if field.name in skip:
            continue
        value = _value(obj, field.name)
        if value is _UNSET:
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            target = getattr(message, field.name)
            for k, v in dict(value).items():
                target[str(k)] = "" if v is None else str(v)
        elif field.label == field.LABEL_REPEATED:
            if field.message_type is not None:
                continue  # handled by the caller (node_taints)
            getattr(message, field.name).extend(str(v) for v in value)
        elif field.type == field.TYPE_STRING:
            if field.name in ("created_at", "updated_at"):
                setattr(message, field.name, _timestamp(value))
            else:
                setattr(message, field.name, str(value))
        elif field.type == field.TYPE_BOOL:
            setattr(message, field.name, bool(value))
        elif field.type in (field.TYPE_INT32, field.TYPE_INT64):
            try:
                setattr(message, field.name, int(value))
            except (TypeError, ValueError):
                pass
    return message


def cluster_template(ct):
    return _fill(magnum_pb2.ClusterTemplate(), ct)


def nodegroup(ng):
    msg = _fill(magnum_pb2.NodeGroup(), ng)
    taints = _value(ng, "node_taints")
    if taints is not _UNSET:
        for t in taints:
            msg.node_taints.add(
                key=str(t.get("key", "")),
                value=str(t.get("value", "") or ""),
                effect=str(t.get("effect", "")),
            )
    return msg


def cluster(c):
    # master_count/node_count are computed properties (DB queries); they are
    # cheap next to a gRPC call and spare the sidecar summing node groups.
    msg = _fill(magnum_pb2.Cluster(), c, skip=("master_count", "node_count"))
    for name in ("master_count", "node_count"):
        try:
            setattr(msg, name, int(getattr(c, name) or 0))
        except Exception:  # noqa: BLE001 - an unloaded relation must not fail a call
            pass
    return msg


def spec(c, template=None, nodegroups=None):
    """ClusterSpec: the cluster, its (or the given) template and node groups."""
    msg = driver_pb2.ClusterSpec()
    msg.cluster.CopyFrom(cluster(c))
    msg.cluster_template.CopyFrom(
        cluster_template(template if template is not None else c.cluster_template)
    )
    for ng in nodegroups if nodegroups is not None else c.nodegroups:
        msg.nodegroups.add().CopyFrom(nodegroup(ng))
    return msg


def request_context(context):
    msg = magnum_pb2.RequestContext()
    auth_url = getattr(context, "auth_url", None)
    if not auth_url:
        # The API fills context.auth_url from keystonemiddleware; periodic
        # admin contexts lack it.
        try:
            auth_url = CONF.keystone_authtoken.www_authenticate_uri
        except cfg.Error:
            auth_url = None
    for name, value in (
        ("auth_token", getattr(context, "auth_token", None)),
        ("auth_url", auth_url),
        ("user_id", getattr(context, "user_id", None)),
        ("project_id", getattr(context, "project_id", None)),
        ("region_name", getattr(context, "region_name", None)),
        ("request_id", getattr(context, "request_id", None)),
    ):
        if value:
            setattr(msg, name, str(value))
    msg.is_admin = bool(getattr(context, "is_admin", False))
    return msg


def metadata(context, c):
    """gRPC metadata the sidecar puts on every log line of the call."""
    md = []
    request_id = getattr(context, "request_id", None)
    if request_id:
        md.append(("x-openstack-request-id", str(request_id)))
    uuid = getattr(c, "uuid", None)
    if uuid:
        md.append(("magnum-cluster-uuid", str(uuid)))
    return md
