"""Writes the sidecar's status answer back onto Magnum's objects.

The answer describes the cluster and node groups as they were when the shim
read them, but the conductor keeps working meanwhile: a resize sets a node
group to UPDATE_IN_PROGRESS with a new node_count, a node group create adds a
row, an upgrade or a CA rotation moves the cluster. Writing an answer about a
state that no longer exists would clobber that (e.g. mark a resize that has
just begun UPDATE_COMPLETE, after which Magnum stops polling the cluster).

So the write is compare-and-save: just before writing, the rows are read
again and compared with the versions that were sent (cluster status and
template; each node group's status, node_count and updated_at; the set of
node groups). If anything changed, nothing is written and the next periodic
sync (10 s later) derives the status afresh. The compare and the save are not
one transaction (Magnum's DB API has no conditional update); the window left
is the few milliseconds between the re-read and the save, instead of the
whole round trip to the sidecar.

The cluster's updated_at is not compared: the periodic health job saves
health_status on the same row without changing anything the status is about.

Objects are saved only when a field changed: every save bumps updated_at and
costs a DB write, and the periodic sync runs every 10 s for every cluster in
progress.
"""

from magnum.common import exception
from magnum import objects
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _cluster_version(cluster):
    return (cluster.status, cluster.cluster_template_id)


def _nodegroup_version(ng):
    return (ng.status, ng.node_count, ng.updated_at)


class Snapshot(object):
    """The versions of the rows a status request was built from."""

    def __init__(self, cluster, nodegroups):
        self.cluster = _cluster_version(cluster)
        self.nodegroups = {ng.uuid: _nodegroup_version(ng) for ng in nodegroups}

    def changed(self, cluster, nodegroups):
        """What changed since the snapshot, or None."""
        if _cluster_version(cluster) != self.cluster:
            return "cluster %s -> %s" % (self.cluster, _cluster_version(cluster))
        current = {ng.uuid: ng for ng in nodegroups}
        if set(current) != set(self.nodegroups):
            return "node groups %s -> %s" % (
                sorted(self.nodegroups), sorted(current))
        for uuid, version in self.nodegroups.items():
            if _nodegroup_version(current[uuid]) != version:
                return "node group %s %s -> %s" % (
                    current[uuid].name, version[:2],
                    _nodegroup_version(current[uuid])[:2])
        return None


def _set(obj, name, value):
    """Set obj.name to value if different; report whether it changed."""
    if getattr(obj, name, None) == value:
        return False
    setattr(obj, name, value)
    return True


def apply_cluster_status(cluster, snapshot, status):
    """Copy a ClusterStatus message onto the cluster and its node groups,
    unless the rows changed since snapshot was taken.

    Returns True when the answer was written.
    """
    context = cluster._context
    try:
        current_cluster = objects.Cluster.get_by_uuid(context, cluster.uuid)
    except exception.ClusterNotFound:
        return False
    nodegroups = objects.NodeGroup.list(context, cluster.uuid)
    changed = snapshot.changed(current_cluster, nodegroups)
    if changed:
        LOG.info(
            "Cluster %s changed while its status was derived (%s); leaving "
            "it to the next status sync",
            cluster.uuid,
            changed,
        )
        return False

    by_uuid = {ng.uuid: ng for ng in nodegroups}
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
            try:
                ng.destroy()
            except exception.NodeGroupNotFound:
                pass  # another sync got there first
            continue
        ng_changed = False
        ng_changed |= _set(ng, "status", ngs.status or ng.status)
        ng_changed |= _set(ng, "status_reason", ngs.status_reason or None)
        if ngs.node_count or ngs.status.endswith("COMPLETE"):
            ng_changed |= _set(ng, "node_count", ngs.node_count)
        ng_changed |= _set(ng, "node_addresses", list(ngs.node_addresses))
        if ng_changed:
            ng.save()

    cluster_changed = False
    cluster_changed |= _set(cluster, "status", status.status or cluster.status)
    cluster_changed |= _set(cluster, "status_reason",
                            status.status_reason or None)
    if status.api_address:
        cluster_changed |= _set(cluster, "api_address", status.api_address)
    if status.coe_version:
        cluster_changed |= _set(cluster, "coe_version", status.coe_version)
    if cluster_changed:
        cluster.save()
    return True
