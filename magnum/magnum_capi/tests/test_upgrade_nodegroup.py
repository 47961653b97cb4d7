"""What upgrade_cluster sends and saves for `openstack coe cluster upgrade
--nodegroup`: a default group (magnum-api's choice when the user names
none) or the master group moves the whole cluster; another worker group
moves alone, and only its image_id and labels are saved."""

import unittest
from unittest import mock

from magnum.common import exception
from magnum.objects import fields

from magnum_capi._grpc import grpc
from magnum_capi import driver
from magnum_capi import errors
from magnum_capi import upgrade
from magnum_capi.tests.test_errors_api import _RpcError


class _Obj(object):
    """A Magnum object as upgrade_cluster uses it: attributes and save(),
    which records what was saved."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
        self.saved = []

    def save(self):
        self.saved.append({k: v for k, v in self.__dict__.items() if k != "saved"})

    def obj_reset_changes(self, names):
        pass


def _cluster():
    old = _Obj(uuid="tmpl-old", name="k8s-v1.32.5", image_id="img-v1.32.5",
               labels={"kube_tag": "v1.32.5", "boot_volume_size": "20"})
    ngs = [
        _Obj(uuid="ng-master", name="default-master", role="master", is_default=True,
             image_id="img-v1.33.2", labels={"kube_tag": "v1.33.2"}, node_count=1),
        _Obj(uuid="ng-worker", name="default-worker", role="worker", is_default=True,
             image_id="img-v1.33.2", labels={"kube_tag": "v1.33.2"}, node_count=2),
        _Obj(uuid="ng-gpu", name="gpu", role="worker", is_default=False,
             image_id="img-v1.32.5", labels={"kube_tag": "v1.32.5", "gpu": "yes"}, node_count=1),
    ]
    current = _Obj(uuid="tmpl-cur", name="k8s-v1.33.2", image_id="img-v1.33.2",
                   labels={"kube_tag": "v1.33.2", "boot_volume_size": "20"})
    cluster = _Obj(uuid="c1", name="c1", stack_id="c1-abcdefghijkl", cluster_template_id="tmpl-cur",
                   cluster_template=current, labels={"kube_tag": "v1.33.2", "boot_volume_size": "20"},
                   nodegroups=ngs)
    return cluster, old, current


class UpgradeNodeGroupTest(unittest.TestCase):

    def _upgrade(self, cluster, template, nodegroup, answer=None):
        with mock.patch.object(driver.Driver, "_call", side_effect=answer) as call:
            driver.Driver().upgrade_cluster(mock.Mock(), cluster, template, 2, nodegroup)
        return call.call_args[0][1]  # the UpgradeClusterRequest

    def test_single_group(self):
        cluster, _, _ = _cluster()
        by_name = {ng.name: ng for ng in cluster.nodegroups}
        for name, single in (("default-master", False), ("default-worker", False), ("gpu", True)):
            self.assertEqual(single, upgrade.single_group(by_name[name]), name)
        self.assertFalse(upgrade.single_group(None))

    def test_other_worker_group_moves_alone(self):
        cluster, _, current = _cluster()
        gpu = cluster.nodegroups[2]
        # As magnum-api sends it: the group and the cluster's own template
        # (it refuses another), passed as a separate object.
        passed = _Obj(**{k: v for k, v in gpu.__dict__.items() if k != "saved"})
        req = self._upgrade(cluster, current, passed)

        self.assertEqual("ng-gpu", req.nodegroup_uuid)
        self.assertEqual(2, req.max_batch_size)
        self.assertEqual("tmpl-cur", req.spec.cluster.cluster_template_id)
        self.assertEqual("img-v1.33.2", req.spec.cluster_template.image_id)
        sent = {ng.name: ng for ng in req.spec.nodegroups}
        self.assertEqual("img-v1.33.2", sent["gpu"].image_id)
        self.assertEqual({"kube_tag": "v1.33.2", "gpu": "yes"}, dict(sent["gpu"].labels))
        self.assertEqual("img-v1.33.2", sent["default-worker"].image_id)

        # Saved: that group's image, labels and status; nothing else.
        for ng in (gpu, passed):
            self.assertEqual(1, len(ng.saved))
            self.assertEqual("img-v1.33.2", ng.saved[0]["image_id"])
            self.assertEqual({"kube_tag": "v1.33.2", "gpu": "yes"}, ng.saved[0]["labels"])
            self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, ng.saved[0]["status"])
        for ng in cluster.nodegroups[:2]:
            self.assertEqual([], ng.saved, ng.name)
        self.assertEqual([], cluster.saved)
        self.assertEqual("tmpl-cur", cluster.cluster_template_id)
        self.assertIs(current, cluster.cluster_template)

    def test_default_group_moves_the_whole_cluster(self):
        for default in ("default-worker", "default-master"):
            cluster, _, _ = _cluster()
            new = _Obj(uuid="tmpl-new", name="k8s-v1.34.1", image_id="img-v1.34.1",
                       labels={"kube_tag": "v1.34.1", "boot_volume_size": "20"})
            ng = next(n for n in cluster.nodegroups if n.name == default)
            req = self._upgrade(cluster, new, ng)
            self.assertEqual("tmpl-new", req.spec.cluster.cluster_template_id)
            self.assertEqual({"img-v1.34.1"}, {n.image_id for n in req.spec.nodegroups})
            self.assertEqual("tmpl-new", cluster.saved[-1]["cluster_template_id"])
            for n in cluster.nodegroups:
                self.assertEqual("img-v1.34.1", n.saved[-1]["image_id"], n.name)

    def test_refused_group_upgrade_saves_nothing(self):
        cluster, old, _ = _cluster()
        gpu = cluster.nodegroups[2]
        gpu.image_id = "img-v1.33.2"
        # The sidecar's answer as the client turns it into Magnum's error.
        refused = errors.from_rpc_error(_RpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            'nodegroup_uuid: invalid value "ng-gpu": expected an upgrade of node group "gpu", '
            'not a downgrade from v1.33.2 to v1.32.5'), "UpgradeCluster", 45, crosses_api=True)
        with self.assertRaises(exception.InvalidParameterValue) as raised:
            self._upgrade(cluster, old, gpu, refused)
        self.assertIn("nodegroup_uuid", str(raised.exception))
        self.assertIn("not a downgrade from v1\u20243", str(raised.exception))
        self.assertEqual([], gpu.saved)
        self.assertEqual([], cluster.saved)
        self.assertEqual("img-v1.33.2", gpu.image_id)


if __name__ == "__main__":
    unittest.main()
