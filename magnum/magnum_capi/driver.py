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
# Registers [magnum_capi]: magnum-api and magnum-conductor load this module
# through the magnum.drivers entry point and import nothing else of ours
# first (Magnum's get_drivers() calls provides on every installed driver).
from magnum_capi import conf  # noqa: F401
from magnum_capi import convert
from magnum_capi import errors
from magnum_capi import monitor
from magnum_capi import status as status_writer
from magnum_capi import upgrade
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


class _TemplateDefinition(object):
    """The one attribute magnum-driver-manage reads from a Heat driver's
    template definition."""

    def __init__(self, template_path):
        self.template_path = template_path


class Driver(driver.Driver):
    """Cluster API driver backed by the magnum-capi sidecar."""

    # Magnum >= 18 refuses "beta" drivers unless enabled; this one is not.
    beta = False
    # Magnum 22 (2026.1) creates a trustee user and a trust per cluster only
    # for drivers that need one; Cluster API machines authenticate with an
    # application credential, never a trust. Magnum 15-21 ignore this and
    # always create them (cleanup.py deletes them on 15-17, Magnum's
    # periodic job on 18-22); Magnum 23 (master) has no trusts at all.
    needs_trust = False

    @property
    def provides(self):
        """How Magnum 15-17 choose this driver (the image's os_distro in
        these tuples). Magnum 18 and later choose by the image property
        magnum_driver=magnum_capi, and Magnum 23 also by [drivers]
        default_driver = magnum_capi for templates whose image names none
        (without it, the alphabetically first installed driver); all of them
        still validate cluster creation by the tuple."""
        return _provides()

    # -- helpers ---------------------------------------------------------

    def _call(self, method, request, context, cluster, timeout=None,
              crosses_api=False):
        return client.call(
            method,
            request,
            timeout or CONF.magnum_capi.call_timeout,
            convert.metadata(context, cluster),
            crosses_api=crosses_api,
        )

    @staticmethod
    def _nodegroups_with(cluster, nodegroup):
        """The cluster's node groups as stored, with nodegroup as the
        conductor holds it: its changes (a new node_count, min/max, a status)
        are not always saved before the driver is called."""
        ngs = [ng for ng in cluster.nodegroups if ng.uuid != nodegroup.uuid]
        ngs.append(nodegroup)
        return ngs

    # -- cluster lifecycle -------------------------------------------------

    def create_cluster(self, context, cluster, cluster_create_timeout):
        resp = self._call(
            "CreateCluster",
            driver_pb2.CreateClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
                certificates=certificates.authorities(cluster, context),
            ),
            context,
            cluster,
            timeout=CONF.magnum_capi.create_call_timeout,
        )
        # The conductor copies stack_id to the node groups after we return.
        cluster.stack_id = resp.stack_id
        cluster.save()

    def update_cluster(self, context, cluster, scale_manager=None, rollback=False):
        # The conductor has saved the default worker group's new node_count
        # and sets the cluster to UPDATE_IN_PROGRESS when this returns.
        self._call(
            "UpdateCluster",
            driver_pb2.UpdateClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
            ),
            context,
            cluster,
        )
        # Only once the change is applied: on an error the conductor fails
        # the cluster and restores the count, and the group must not be left
        # in progress under a failed cluster that nothing polls.
        worker = cluster.default_ng_worker
        worker.status = fields.ClusterStatus.UPDATE_IN_PROGRESS
        worker.status_reason = None
        worker.save()

    def resize_cluster(self, context, cluster, resize_manager, node_count,
                       nodes_to_remove, nodegroup=None):
        # The conductor has set nodegroup's node_count and UPDATE_IN_PROGRESS
        # (and saved them); it also calls this from UPDATE_FAILED, which is
        # how a failed update is retried.
        if nodegroup is None:
            nodegroup = cluster.default_ng_worker
            nodegroup.node_count = int(node_count)
        self._call(
            "ResizeCluster",
            driver_pb2.ResizeClusterRequest(
                context=convert.request_context(context),
                spec=convert.spec(
                    cluster, nodegroups=self._nodegroups_with(cluster, nodegroup)),
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
        """Move the cluster, or one node group, to cluster_template.

        A synchronous Magnum RPC: it only renders and applies, well inside
        rpc_response_timeout, and Cluster API rolls the machines afterwards.
        A downgrade or a skip of more than one minor Kubernetes version is
        refused by the sidecar with NotSupported before anything changes,
        and nothing is saved here either: Magnum >= 18 then leaves the
        cluster's status as it was (Magnum 15-17 set UPDATE_FAILED on any
        exception; a resize to the same size recovers from that).

        nodegroup is what magnum-api passes: the default worker group when
        the user named none. A default group (or the master group) moves
        the whole cluster: the control plane and every node group. Another
        worker group moves alone (upgrade.single_group): only its image_id
        and labels are saved, the cluster keeps its template, and the
        sidecar refuses (InvalidParameterValue) a group newer than the
        control plane's minor version or a downgrade. magnum-api allows
        such an upgrade only to the cluster's own template, so it brings a
        group that lags (created with an older image, or not yet upgraded)
        to the cluster's version.

        max_batch_size is how many machines of each node group Cluster API
        replaces at a time (the MachineDeployments' rolling update); the
        control plane rolls one machine at a time.

        A failure the sidecar marks applied (it came after the release's
        first write: the management cluster has the new template) is
        recorded like a success, with the node groups UPDATE_FAILED, and
        raised: the conductor fails the cluster, which names the new
        template as the release does.
        """
        single = upgrade.single_group(nodegroup)
        # The request describes the cluster as it will be; the objects are
        # changed only once the sidecar accepted it.
        if single:
            spec, labels = upgrade.nodegroup_spec(cluster, nodegroup, cluster_template)
        else:
            spec, labels = upgrade.spec(cluster, cluster_template)
        try:
            self._call(
                "UpgradeCluster",
                driver_pb2.UpgradeClusterRequest(
                    context=convert.request_context(context),
                    spec=spec,
                    max_batch_size=int(max_batch_size or 0),
                    nodegroup_uuid=getattr(nodegroup, "uuid", "") or "",
                ),
                context,
                cluster,
                crosses_api=True,  # a synchronous RPC: magnum-api shows the error
            )
        except Exception as e:
            if errors.outcome(e) != errors.APPLIED:
                raise
            # Past the sidecar's point of no return: the release has the
            # new template, so Magnum records it, failed (the conductor
            # fails the cluster and nodegroup).
            err = errors.applied(e, "The upgrade is recorded (the management "
                                 "cluster has it) but did not complete")
            self._save_upgrade(cluster, cluster_template, nodegroup, single,
                               labels, fields.ClusterStatus.UPDATE_FAILED, str(err))
            raise err
        self._save_upgrade(cluster, cluster_template, nodegroup, single, labels,
                           fields.ClusterStatus.UPDATE_IN_PROGRESS, None)

    def _save_upgrade(self, cluster, cluster_template, nodegroup, single,
                      labels, status, reason):
        if single:
            self._save_nodegroup_upgrade(cluster, nodegroup, cluster_template,
                                         labels, status, reason)
        else:
            self._save_cluster_upgrade(cluster, cluster_template, labels,
                                       status, reason)

    @staticmethod
    def _save_nodegroup_upgrade(cluster, nodegroup, cluster_template, labels,
                                status, reason):
        """Record a node group upgraded alone: its image (which gives it its
        version on every later render) and labels. The conductor saves the
        cluster's and this group's status after this returns."""
        for ng in [n for n in cluster.nodegroups if n.uuid == nodegroup.uuid] + [nodegroup]:
            ng.image_id = cluster_template.image_id
            ng.labels = dict(labels)
            ng.status = status
            ng.status_reason = reason
            ng.save()

    @staticmethod
    def _save_cluster_upgrade(cluster, cluster_template, labels, status,
                              reason):
        """Record a whole-cluster upgrade. The conductor records neither the
        new template nor the images; the driver does. It saves the cluster
        and nodegroup (status only) after this returns."""
        for ng in cluster.nodegroups:
            ng.image_id = cluster_template.image_id
            ng.status = status
            ng.status_reason = reason
            ng.save()
        cluster.cluster_template_id = cluster_template.uuid
        cluster.labels = labels
        cluster.save()
        # The lazily loaded template is the old one; later readers of this
        # object in the same call see the new one (not a column: not saved).
        cluster.cluster_template = cluster_template
        cluster.obj_reset_changes(["cluster_template"])

    def delete_cluster(self, context, cluster):
        # Node groups first: the sidecar's status for a deleting cluster
        # follows each group's deletion.
        ngs = cluster.nodegroups
        for ng in ngs:
            ng.status = fields.ClusterStatus.DELETE_IN_PROGRESS
            ng.status_reason = None
            ng.save()
        try:
            self._call(
                "DeleteCluster",
                driver_pb2.DeleteClusterRequest(
                    context=convert.request_context(context),
                    spec=convert.spec(cluster, nodegroups=ngs),
                ),
                context,
                cluster,
            )
        except Exception as e:
            # The conductor sets the cluster DELETE_FAILED; its groups
            # follow, so none is left "in progress" under a failed cluster.
            for ng in ngs:
                ng.status = fields.ClusterStatus.DELETE_FAILED
                ng.status_reason = str(e)
                ng.save()
            raise

    def update_cluster_status(self, context, cluster, use_admin_ctx=False):
        # The periodic job loaded the cluster at the start of its tick.
        cluster.refresh()
        ngs = cluster.nodegroups
        snapshot = status_writer.Snapshot(cluster, ngs)
        resp = self._call(
            "GetClusterStatus",
            driver_pb2.GetClusterStatusRequest(
                spec=convert.spec(cluster, nodegroups=ngs)),
            context,
            cluster,
            timeout=CONF.magnum_capi.status_timeout,
        )
        status_writer.apply_cluster_status(cluster, snapshot, resp.status)
        if cluster.status == fields.ClusterStatus.DELETE_COMPLETE:
            cleanup.after_delete_complete(context, cluster)

    # -- node groups -----------------------------------------------------
    #
    # The conductor has set the cluster UPDATE_IN_PROGRESS; it sets the node
    # group CREATE_FAILED/UPDATE_FAILED/DELETE_FAILED (and the cluster
    # UPDATE_FAILED) if these raise. The group's status is saved before the
    # call so that the periodic sync, which may run at any time, follows it.

    def _nodegroup_call(self, method, request_type, context, cluster, nodegroup):
        self._call(
            method,
            request_type(
                context=convert.request_context(context),
                spec=convert.spec(
                    cluster, nodegroups=self._nodegroups_with(cluster, nodegroup)),
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
        # The API changed node_count/min/max on this object without saving.
        nodegroup.status = fields.ClusterStatus.UPDATE_IN_PROGRESS
        nodegroup.status_reason = None
        nodegroup.save()
        self._nodegroup_call("UpdateNodeGroup", driver_pb2.UpdateNodeGroupRequest,
                             context, cluster, nodegroup)

    def delete_nodegroup(self, context, cluster, nodegroup):
        # The sidecar leaves a DELETE_IN_PROGRESS group out of the values, so
        # Helm removes its MachineDeployment; the status sync destroys the
        # row once its machines are gone (Magnum master no longer does, and
        # Magnum 15-22 only did when a Heat driver raised HTTPNotFound).
        nodegroup.status = fields.ClusterStatus.DELETE_IN_PROGRESS
        nodegroup.status_reason = None
        nodegroup.save()
        self._nodegroup_call("DeleteNodeGroup", driver_pb2.DeleteNodeGroupRequest,
                             context, cluster, nodegroup)

    # -- health, certificates, credentials ---------------------------------

    def get_monitor(self, context, cluster):
        return monitor.Monitor(context, cluster)

    def rotate_ca_certificate(self, context, cluster):
        """The conductor has just generated new CA material and set the new
        references on this (not yet saved) object; it saves the object
        whether this succeeds or raises (UPDATE_IN_PROGRESS, or
        UPDATE_FAILED with the exception's message), and no Magnum release
        (15 to 23) deletes the certificates it replaced. So the driver
        does, keeping Magnum on the CA the management cluster holds (what
        `coe cluster config` hands out must be what the cluster trusts):

        - the sidecar has the new CAs (success, or a failure its answer
          marks applied: it passed its point of no return, the release's
          first write): the old certificates are deleted, the new kept;
        - the sidecar refused or failed before that point (it put the old
          CA Secrets back): the object gets its old references back and
          the new certificates are deleted;
        - nobody answered in time (unknown): the old references come back,
          but the new certificates are kept, and logged for the operator,
          in case the management cluster holds them.
        """
        old = certificates.stored_references(context, cluster)
        new = certificates.references(cluster)
        replaced = {n: old[n] for n in old if old[n] and old[n] != new[n]}
        unused = {n: new[n] for n in new if new[n] and new[n] != old[n]}
        try:
            self._call(
                "RotateCACertificate",
                driver_pb2.RotateCACertificateRequest(
                    context=convert.request_context(context),
                    spec=convert.spec(cluster),
                    certificates=certificates.authorities(cluster, context),
                ),
                context,
                cluster,
                crosses_api=True,
            )
        except Exception as e:
            outcome = errors.outcome(e)
            if outcome == errors.APPLIED:
                certificates.delete(context, cluster, replaced)
                raise errors.applied(
                    e, "The new CA certificates are in the management cluster "
                    "and Magnum keeps them, but rolling the nodes onto them failed")
            for name, ref in old.items():
                setattr(cluster, name, ref)
            if outcome == errors.UNKNOWN:
                LOG.error("Cluster %s: the CA rotation's outcome is unknown (the "
                          "sidecar did not answer); Magnum keeps the old "
                          "certificates and leaves the new ones %s in place",
                          cluster.uuid, unused)
            else:
                certificates.delete(context, cluster, unused)
            raise
        certificates.delete(context, cluster, replaced)

    def rotate_credential(self, context, cluster):
        """Magnum >= 21 (PATCH /v1/credentials/{cluster}); callable on any
        release. The cluster's status is not changed (nothing rolls)."""
        self._call(
            "RotateCredential",
            driver_pb2.RotateCredentialRequest(
                context=convert.request_context(context),
                spec=convert.spec(cluster),
            ),
            context,
            cluster,
            crosses_api=True,
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
        # Cluster API's KubeadmControlPlane scales in place, one machine at
        # a time; only the size must keep an etcd majority.
        self.validate_master_size(node_count)

    # -- magnum-driver-manage ----------------------------------------------

    def get_template_definition(self):
        """`magnum-driver-manage list-drivers` asks every installed driver
        for its Heat template definition and prints its template_path; one
        driver without it fails the whole listing. There is no Heat
        template: the path says what builds clusters instead."""
        return _TemplateDefinition(
            "openstack-cluster Helm chart, rendered by the magnum-capi "
            "sidecar at %s" % CONF.magnum_capi.sidecar_address)

    # -- not applicable ------------------------------------------------------

    def create_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")

    def update_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")

    def delete_federation(self, context, federation):
        raise NotImplementedError("Federations are not supported by magnum-capi")

