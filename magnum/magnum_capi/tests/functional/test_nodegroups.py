"""Node groups through Magnum's own nodegroup conductor: create, update
(min/max/node count), delete; the deleted group's row is destroyed by the
status sync once its machines are gone (Magnum master no longer does it, and
Magnum 15-22 only did when a Heat driver raised HTTPNotFound)."""

import uuid

from magnum.common import exception
from magnum import objects
from magnum.objects import fields

from magnum_capi.tests.functional import base


class NodeGroupTest(base.FunctionalTestCase):
    def new_nodegroup(self, cluster, name, node_count=1, **kw):
        """A NodeGroup object as magnum-api's POST .../nodegroups builds it:
        image and flavor from the cluster, labels copied from the cluster,
        not yet in the database (the conductor creates it)."""
        fields_ = dict(
            name=name, cluster_id=cluster.uuid, project_id=cluster.project_id,
            role="worker", is_default=False, node_count=node_count,
            min_node_count=0, max_node_count=None, docker_volume_size=None,
            labels=dict(cluster.labels), flavor_id=cluster.flavor_id,
            image_id=cluster.cluster_template.image_id, node_addresses=[],
        )
        fields_.update(kw)
        ng = objects.NodeGroup(self.user_context, **fields_)
        ng.uuid = str(uuid.uuid4())
        return ng

    def test_create_update_delete(self):
        # Autoscaling on: min/max reach Cluster API as the autoscaler's
        # bounds whenever they differ (equal bounds mean a fixed size).
        template = self.create_template("v1.33.2", labels={"auto_scaling_enabled": "true"})
        cluster = self.create_ready_cluster(template, "ngs", node_count=1)
        worker = cluster.default_ng_worker
        ngc = self.nodegroup_conductor()

        # -- openstack coe nodegroup create ngs gpu --node-count 2
        #    --min-nodes 2 --max-nodes 2 ------------------------------------
        ngc.nodegroup_create(self.user_context, cluster, self.new_nodegroup(
            cluster, "gpu", node_count=2, min_node_count=2, max_node_count=2))
        cluster = self.reload(cluster)
        gpu = self.nodegroup(cluster, "gpu")
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        self.assertEqual(fields.ClusterStatus.CREATE_IN_PROGRESS, gpu.status)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        gpu = self.nodegroup(cluster, "gpu")
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, gpu.status)
        self.assertEqual(2, gpu.node_count)
        self.assertEqual(2, len(gpu.node_addresses))
        self.assertEqual(2, len(self.machines(cluster, gpu)))
        self.assertEqual({}, self._autoscaler_bounds(cluster, "gpu"))
        # The other groups are untouched.
        self.assertEqual(1, len(self.machines(cluster, worker)))
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE,
                         self.nodegroup(cluster, worker.name).status)

        # -- nodegroup update gpu replace node_count=3 min_node_count=3
        #    max_node_count=3: the API changes the object, and the conductor
        #    saves it only after the driver returned -------------------------
        gpu.min_node_count, gpu.max_node_count, gpu.node_count = 3, 3, 3
        ngc.nodegroup_update(self.user_context, self.reload(cluster), gpu)
        gpu = self.nodegroup(cluster, "gpu")
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, gpu.status)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        gpu = self.nodegroup(cluster, "gpu")
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, gpu.status)
        self.assertEqual(3, gpu.node_count)
        self.assertEqual(3, len(gpu.node_addresses))
        self.assertEqual(3, len(self.machines(cluster, gpu)))

        # -- nodegroup update gpu replace min_node_count=1 max_node_count=4:
        #    now the autoscaler owns the size, within these bounds ----------
        gpu.min_node_count, gpu.max_node_count = 1, 4
        ngc.nodegroup_update(self.user_context, self.reload(cluster), gpu)
        self.assertEqual({"min": "1", "max": "4"}, self._autoscaler_bounds(cluster, "gpu"))
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        gpu = self.nodegroup(cluster, "gpu")
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, gpu.status)
        self.assertEqual((1, 4), (gpu.min_node_count, gpu.max_node_count))
        # Magnum's node_count follows what Cluster API holds the group at.
        self.assertEqual(len(self.machines(cluster, gpu)), gpu.node_count)
        self.assertTrue(1 <= gpu.node_count <= 4, gpu.node_count)

        # -- openstack coe nodegroup delete ngs gpu -------------------------
        ngc.nodegroup_delete(self.user_context, self.reload(cluster), self.nodegroup(cluster, "gpu"))
        self.assertEqual(fields.ClusterStatus.DELETE_IN_PROGRESS, self.nodegroup(cluster, "gpu").status)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, self.reload(cluster).status)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        self.assertIsNone(self.nodegroup(cluster, "gpu"),
                          "the deleted group's row is destroyed once its machines are gone")
        self.assertEqual([], self.machines(cluster, gpu))
        self.assertIsNone(self._machine_deployment(cluster, "gpu"))
        self.assertEqual(["default-master", "default-worker"],
                         sorted(ng.name for ng in self.reload(cluster).nodegroups))
        self.assertEqual(1, len(self.machines(cluster, worker)))

        self.delete_cluster(cluster)

    def test_invalid_nodegroup_is_refused_and_nothing_applied(self):
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "ngbad", node_count=1)
        revisions = self.release_revisions(cluster)
        bad = self.new_nodegroup(cluster, "disk", labels=dict(cluster.labels, boot_volume_size="lots"))
        err = self.assertRaises(exception.InvalidParameterValue,
                                self.nodegroup_conductor().nodegroup_create,
                                self.user_context, cluster, bad)
        self.assertIn("boot_volume_size", str(err))
        self.assertIn("lots", str(err))
        self.assertEqual(revisions, self.release_revisions(cluster))
        ng = self.nodegroup(cluster, "disk")
        # Magnum's conductor records the failure on the group and the cluster.
        self.assertEqual(fields.ClusterStatus.CREATE_FAILED, ng.status)
        self.assertEqual(str(err), ng.status_reason)
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, self.reload(cluster).status)

        # A failed group is deleted like any other; its row goes at once
        # since it never had machines.
        self.nodegroup_conductor().nodegroup_delete(self.user_context, self.reload(cluster), ng)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        self.assertIsNone(self.nodegroup(cluster, "disk"))
        self.delete_cluster(cluster)

    def _machine_deployment(self, cluster, group):
        for d in self.kube_items("machinedeployments", self.namespace(cluster),
                                 "cluster.x-k8s.io/cluster-name=" + cluster.stack_id):
            if d["metadata"]["name"] == cluster.stack_id + "-" + group:
                return d
        return None

    def _autoscaler_bounds(self, cluster, group):
        deployment = self._machine_deployment(cluster, group)
        self.assertIsNotNone(deployment, "no MachineDeployment for node group " + group)
        annotations = deployment["metadata"].get("annotations") or {}
        prefix = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-"
        return {k[len(prefix):-len("-size")]: v for k, v in annotations.items()
                if k.startswith(prefix)}
