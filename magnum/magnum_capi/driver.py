"""The Magnum driver: each method is one call to the magnum-capi sidecar.

Magnum constructs a new Driver for every call (in magnum-api too), so
__init__ does nothing; the gRPC channel lives at module level (client.py).
The class works on Magnum 15 (Zed) through master: it imports no name an
older release lacks, and defines methods later releases added.
"""

from magnum.common import exception
from magnum.drivers.common import driver
from magnum.objects import fields
from oslo_config import cfg
from oslo_log import log as logging

from magnum_capi import cleanup
from magnum_capi import certificates
from magnum_capi import client
from magnum_capi import convert
from magnum_capi import monitor
from magnum_capi import status as status_writer
from magnumcapi.v1 import driver_pb2

LOG = logging.getLogger(__name__)
CONF = cfg.CONF


def _provides():
    tuples = []
    for entry in CONF.magnum_capi.provides:
        parts = [p.strip() for p in entry.split(":")]
        if len(parts) != 3 or not all(parts):
            raise exception.InvalidParameterValue(
                err="[magnum_capi] provides entry %r: expected "
                "server_type:os:coe, e.g. vm:ubuntu:kubernetes" % entry
            )
        tuples.append({"server_type": parts[0], "os": parts[1], "coe": parts[2]})
    return tuples


class Driver(driver.Driver):
    """Cluster API driver backed by the magnum-capi sidecar."""

    @property
    def provides(self):
        return _provides()

    # -- helpers ---------------------------------------------------------

    def _call(self, method, request, context, cluster, timeout=None):
        return client.call(
            method,
            request,
            timeout or CONF.magnum_capi.call_timeout,
            convert.metadata(context, cluster),
        )

    # -- cluster lifecycle -------------------------------------------------

    def create_cluster(self, context, cluster, cluster_create_timeout):
        resp = self._call(
            "CreateCluster",
            driver_pb2.CreateClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
                certificates=certificates.authorities(cluster, context),
                create_timeout=int(cluster_create_timeout or 0),
            ),
            context,
            cluster,
        )
        # The conductor copies stack_id to the node groups after we return.
        cluster.stack_id = resp.stack_id
        cluster.save()

    def update_cluster(self, context, cluster, scale_manager=None, rollback=False):
        self._call(
            "UpdateCluster",
            driver_pb2.UpdateClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
            ),
            context,
            cluster,
        )

    def resize_cluster(self, context, cluster, resize_manager, node_count,
                       nodes_to_remove, nodegroup=None):
        if nodegroup is None:
            nodegroup = cluster.default_ng_worker
        self._call(
            "ResizeCluster",
            driver_pb2.ResizeClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
                nodegroup_uuid=nodegroup.uuid,
                node_count=int(node_count),
                nodes_to_remove=[str(n) for n in nodes_to_remove or []],
            ),
            context,
            cluster,
        )

    def upgrade_cluster(self, context, cluster, cluster_template,
                        max_batch_size, nodegroup, scale_manager=None,
                        rollback=False):
        # Raises NotSupported (FAILED_PRECONDITION) for a downgrade or a skip
        # of more than one minor version: Magnum >= 18 then leaves the
        # cluster's status as it was.
        self._call(
            "UpgradeCluster",
            driver_pb2.UpgradeClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster, template=cluster_template),
                max_batch_size=int(max_batch_size or 0),
                nodegroup_uuid=getattr(nodegroup, "uuid", "") or "",
            ),
            context,
            cluster,
        )
        # The conductor does not record the new template; the driver does.
        cluster.cluster_template_id = cluster_template.uuid
        for ng in cluster.nodegroups:
            ng.image_id = cluster_template.image_id
            ng.status = fields.ClusterStatus.UPDATE_IN_PROGRESS
            ng.save()
        cluster.save()

    def delete_cluster(self, context, cluster):
        # Node groups first: the periodic sync may run before this returns.
        for ng in cluster.nodegroups:
            ng.status = fields.ClusterStatus.DELETE_IN_PROGRESS
            ng.save()
        self._call(
            "DeleteCluster",
            driver_pb2.DeleteClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
            ),
            context,
            cluster,
        )

    def update_cluster_status(self, context, cluster, use_admin_ctx=False):
        resp = self._call(
            "GetClusterStatus",
            driver_pb2.GetClusterStatusRequest(spec=convert.spec(cluster)),
            context,
            cluster,
            timeout=CONF.magnum_capi.status_timeout,
        )
        status_writer.apply_cluster_status(cluster, resp.status)
        if cluster.status == fields.ClusterStatus.DELETE_COMPLETE:
            cleanup.after_delete_complete(context, cluster)

    # -- node groups -----------------------------------------------------

    def _nodegroup_call(self, method, request_type, context, cluster, nodegroup):
        self._call(
            method,
            request_type(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
                nodegroup_uuid=nodegroup.uuid,
            ),
            context,
            cluster,
        )

    def create_nodegroup(self, context, cluster, nodegroup):
        nodegroup.status = fields.ClusterStatus.CREATE_IN_PROGRESS
        nodegroup.save()
        self._nodegroup_call("CreateNodeGroup", driver_pb2.CreateNodeGroupRequest,
                             context, cluster, nodegroup)

    def update_nodegroup(self, context, cluster, nodegroup):
        nodegroup.status = fields.ClusterStatus.UPDATE_IN_PROGRESS
        nodegroup.save()
        self._nodegroup_call("UpdateNodeGroup", driver_pb2.UpdateNodeGroupRequest,
                             context, cluster, nodegroup)

    def delete_nodegroup(self, context, cluster, nodegroup):
        nodegroup.status = fields.ClusterStatus.DELETE_IN_PROGRESS
        nodegroup.save()
        self._nodegroup_call("DeleteNodeGroup", driver_pb2.DeleteNodeGroupRequest,
                             context, cluster, nodegroup)

    # -- health, certificates, credentials ---------------------------------

    def get_monitor(self, context, cluster):
        return monitor.Monitor(context, cluster)

    def rotate_ca_certificate(self, context, cluster):
        # The conductor has just generated and stored the new CA material.
        self._call(
            "RotateCACertificate",
            driver_pb2.RotateCACertificateRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
                certificates=certificates.authorities(cluster, context),
            ),
            context,
            cluster,
        )

    def rotate_credential(self, context, cluster):
        """Magnum >= 21 (credential API); harmless on older releases."""
        self._call(
            "RotateCredential",
            driver_pb2.RotateCredentialRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
            ),
            context,
            cluster,
        )

    # -- validation (Magnum >= 20 calls these in magnum-api) ----------------

    def validate_master_size(self, node_count):
        if node_count < 1 or node_count % 2 == 0:
            invalid = getattr(exception, "MasterNGSizeInvalid", None)
            if invalid is not None:
                raise invalid(requested_size=node_count)
            raise exception.InvalidParameterValue(
                err="master_count %s: expected an odd number of at least 1 "
                "(etcd needs a majority)" % node_count
            )

    def validate_master_resize(self, node_count):
        self.validate_master_size(node_count)

    # -- not applicable ------------------------------------------------------

    def create_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")

    def update_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")

    def delete_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")
