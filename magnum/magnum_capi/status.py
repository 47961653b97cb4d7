"""Writes the sidecar's status answer back onto Magnum's objects.

Objects are saved only when a field changed: every save bumps updated_at and
costs a DB write, and the periodic sync runs every 10 s for every cluster in
progress.
"""

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _set(obj, name, value):
    """Set obj.name to value if different; report whether it changed."""
    if getattr(obj, name, None) == value:
        return False
    setattr(obj, name, value)
    return True


def apply_cluster_status(cluster, status):
    """Copy a ClusterStatus message onto the cluster and its node groups.

    Returns True when the cluster object itself changed (and was saved).
    """
    by_uuid = {ng.uuid: ng for ng in cluster.nodegroups}
    for ngs in status.nodegroups:
        ng = by_uuid.get(ngs.uuid)
        if ng is None:
            continue
        if ngs.destroy:
            LOG.info(
                "Node group %s of cluster %s is gone from Cluster API; "
                "removing it from Magnum",
                ng.name,
                cluster.uuid,
            )
            ng.destroy()
            continue
        changed = False
        changed |= _set(ng, "status", ngs.status or ng.status)
        changed |= _set(ng, "status_reason", ngs.status_reason or None)
        if ngs.node_count or ngs.status.endswith("COMPLETE"):
            changed |= _set(ng, "node_count", ngs.node_count)
        changed |= _set(ng, "node_addresses", list(ngs.node_addresses))
        if changed:
            ng.save()

    changed = False
    changed |= _set(cluster, "status", status.status or cluster.status)
    changed |= _set(cluster, "status_reason", status.status_reason or None)
    if status.api_address:
        changed |= _set(cluster, "api_address", status.api_address)
    if status.coe_version:
        changed |= _set(cluster, "coe_version", status.coe_version)
    if changed:
        cluster.save()
    return changed
