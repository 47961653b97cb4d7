"""Cluster operations through Magnum's own cluster conductor: update
(default-worker node_count), resize (with nodes_to_remove naming the nodes
that must go, and from UPDATE_FAILED), control-plane resize (Magnum >= 20
lets the API through when validate_master_resize allows it), and the
validation methods magnum-api calls."""

from magnum.common import exception
from magnum.objects import fields

from magnum_capi import driver as capi_driver
from magnum_capi.tests.functional import base

COMPLETE = fields.ClusterStatus.UPDATE_COMPLETE


def _server_id(machine):
    return machine["spec"]["providerID"].rsplit("/", 1)[-1]


def _address(machine):
    return next(a["address"] for a in machine["status"]["addresses"]
                if a["type"] == "InternalIP")


class WorkerOperationsTest(base.FunctionalTestCase):
    def test_update_resize_with_nodes_to_remove_and_recovery(self):
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "ops", node_count=2)
        worker = cluster.default_ng_worker

        # -- openstack coe cluster update ops replace node_count=3 --------
        revisions = self.release_revisions(cluster)
        self.conductor().cluster_update(
            self.user_context, cluster, 3, cluster.health_status,
            cluster.health_status_reason)
        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        worker = self.nodegroup(cluster, worker.name)
        self.assertEqual(3, worker.node_count)
        # The shim marks the group it changed; the conductor does not.
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, worker.status)
        self.assertEqual(len(revisions) + 1, len(self.release_revisions(cluster)))

        self.wait_for_status(cluster, COMPLETE)
        worker = self.nodegroup(cluster, worker.name)
        self.assertEqual(COMPLETE, worker.status)
        self.assertEqual(3, worker.node_count)
        self.assertEqual(3, len(worker.node_addresses))
        machines = self.machines(cluster, worker)
        self.assertEqual(3, len(machines))
        self.assertEqual(sorted(worker.node_addresses),
                         sorted(_address(m) for m in machines))

        # -- resize 3 -> 1, naming the two nodes to remove: one by the
        # address Magnum shows, one by its Nova server id -----------------
        by_address, by_server, keep = sorted(machines, key=lambda m: m["metadata"]["name"])
        self.conductor().cluster_resize(
            self.user_context, self.reload(cluster), 1,
            [_address(by_address), _server_id(by_server)], worker)
        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        self.wait_for_status(cluster, COMPLETE)
        worker = self.nodegroup(cluster, worker.name)
        remaining = self.machines(cluster, worker)
        self.assertEqual([keep["metadata"]["name"]],
                         [m["metadata"]["name"] for m in remaining],
                         "the machines named in nodes_to_remove must be the ones removed")
        self.assertEqual(COMPLETE, worker.status)
        self.assertEqual(1, worker.node_count)
        self.assertEqual([_address(keep)], worker.node_addresses)

        # -- a node that is not in the group: Magnum shows the user which
        # nodes there are, and nothing is applied ------------------------
        revisions = self.release_revisions(cluster)
        err = self.assertRaises(
            exception.InvalidParameterValue,
            self.conductor().cluster_resize,
            self.user_context, self.reload(cluster), 0, ["10.99.99.99"], worker)
        self.assertIn("nodes_to_remove", str(err))
        self.assertIn("10.99.99.99", str(err))
        self.assertIn(_address(keep), str(err))  # what was expected
        self.assertEqual(revisions, self.release_revisions(cluster))
        cluster = self.reload(cluster)
        worker = self.nodegroup(cluster, worker.name)
        # Magnum's conductor fails both and restores the count.
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, cluster.status)
        self.assertEqual(str(err), cluster.status_reason)
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, worker.status)
        self.assertEqual(1, worker.node_count)

        # -- resize is allowed from UPDATE_FAILED: the way out ------------
        self.conductor().cluster_resize(self.user_context, cluster, 2, [], worker)
        self.wait_for_status(cluster, COMPLETE)
        worker = self.nodegroup(cluster, worker.name)
        self.assertEqual(COMPLETE, worker.status)
        self.assertIsNone(worker.status_reason)
        self.assertEqual(2, len(self.machines(cluster, worker)))
        self.assertIn(_address(keep), worker.node_addresses)
        self.assertIsNone(self.reload(cluster).status_reason)

        self.delete_cluster(cluster)


class ControlPlaneTest(base.FunctionalTestCase):
    def test_control_plane_resize(self):
        """Magnum >= 20's API asks validate_master_resize, then calls the
        same conductor resize with the master node group (Magnum 15's API
        refuses before the conductor; the conductor itself does not)."""
        drv = capi_driver.Driver()
        drv.validate_master_resize(3)
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "cp", master_count=1, node_count=1)
        master = cluster.default_ng_master

        self.conductor().cluster_resize(self.user_context, cluster, 3, [], master)
        self.wait_for_status(cluster, COMPLETE)
        cluster = self.reload(cluster)
        master = cluster.default_ng_master
        self.assertEqual(COMPLETE, master.status)
        self.assertEqual(3, master.node_count)
        self.assertEqual(3, len(master.node_addresses))
        self.assertEqual(3, len(self.machines(cluster, master)))
        self.assertEqual(3, cluster.master_count)

        # An even control plane is refused by the sidecar too (a client that
        # skipped the API's validation), naming what is expected.
        revisions = self.release_revisions(cluster)
        err = self.assertRaises(
            exception.InvalidParameterValue,
            self.conductor().cluster_resize,
            self.user_context, cluster, 2, [], master)
        self.assertIn("node_count", str(err))
        self.assertIn("odd", str(err))
        self.assertEqual(revisions, self.release_revisions(cluster))

        self.delete_cluster(cluster)


class ValidationTest(base.FunctionalTestCase):
    """validate_master_size / validate_master_resize: Magnum >= 20's API calls
    them on the driver before casting to the conductor."""

    def test_master_sizes(self):
        drv = capi_driver.Driver()
        for good in (1, 3, 5):
            drv.validate_master_size(good)
            drv.validate_master_resize(good)
        for bad in (0, 2, 4, -1):
            # MasterNGSizeInvalid (an InvalidParameterValue) where Magnum has
            # it (>= 20), InvalidParameterValue before.
            err = self.assertRaises(exception.InvalidParameterValue,
                                    drv.validate_master_size, bad)
            self.assertIn(str(bad), str(err))
            self.assertRaises(exception.InvalidParameterValue,
                              drv.validate_master_resize, bad)

    def test_federations_are_not_implemented(self):
        drv = capi_driver.Driver()
        for method in (drv.create_federation, drv.update_federation,
                       drv.delete_federation):
            err = self.assertRaises(NotImplementedError, method,
                                    self.user_context, None)
            self.assertIn("not supported", str(err))
