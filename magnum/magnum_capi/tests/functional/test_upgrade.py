"""Upgrades through Magnum's own cluster conductor (a synchronous RPC), and
the operator's preview of one (RenderValues through the shim's client).

What Magnum does with a refused upgrade depends on the release. The sidecar
refuses a downgrade or a skip of a minor version with FAILED_PRECONDITION,
which the shim raises as NotSupported, having saved nothing:

- Magnum >= 18 (commit 2fd3059f) re-raises NotSupported from
  cluster_upgrade and leaves the cluster's status as it was.
- Magnum 15-17 (the installed python3-magnum 15.0.1 here) catch every
  exception alike: the cluster and the node group passed in become
  UPDATE_FAILED with the sidecar's message as status_reason, and
  cluster_upgrade refuses to run from UPDATE_FAILED. Nothing else changed
  (template, labels, images, the release), and a resize to the same size is
  allowed from UPDATE_FAILED and brings the cluster back to UPDATE_COMPLETE,
  after which the right upgrade can be run.

The tests assert what the installed release really does.
"""

from magnum.common import exception
from magnum.objects import fields

from magnum_capi import cleanup
from magnum_capi import preview
from magnum_capi.tests.functional import base

MAGNUM = cleanup.magnum_major_version()


class UpgradeTest(base.FunctionalTestCase):
    def test_refused_upgrades_then_next_minor(self):
        old = self.create_template("v1.33.2", labels={"boot_volume_size": "20"})
        cluster = self.new_cluster(
            old, name="upg",
            # What the API stores when the user adds a label to the
            # template's (--merge-labels): inherited ones and one of theirs.
            labels={"boot_volume_size": "20", "boot_volume_type": "fast-ssd"})
        self.create(cluster, master_count=1, node_count=2)
        self.wait_for_status(cluster, fields.ClusterStatus.CREATE_COMPLETE)
        cluster = self.reload(cluster)
        self.assertEqual("v1.33.2", cluster.coe_version)

        for target, words in (("v1.32.5", ["downgrading", "v1.33.2", "v1.32.5"]),
                              ("v1.35.0", ["skips a minor version", "v1.34 first"])):
            self._refused(cluster, self.create_template(target), words)
            cluster = self.reload(cluster)

        new = self.create_template("v1.34.1", labels={"boot_volume_size": "30"})

        # -- the operator's preview: what the upgrade would change ---------
        now = preview.render_values(self.user_context, cluster)
        self.assertTrue(now.deployed)
        self.assertEqual("", now.diff, "nothing changes when nothing is upgraded")
        after = preview.render_values(self.user_context, cluster, new)
        self.assertTrue(after.deployed)
        self.assertIn("kubernetesVersion: 1.34.1", after.values_yaml)
        self.assertIn("kubernetesVersion", after.diff)
        self.assertIn("1.34.1", after.diff)
        self.assertIn("diskSize", after.diff)  # the label that follows the template
        text = preview.run(self.user_context, cluster.name, new.uuid)
        self.assertIn("1.34.1", text)
        self.assertIn("# chart version " + after.chart_version, text)
        revisions = self.release_revisions(cluster)
        self.assertEqual(revisions, self.release_revisions(cluster), "a preview applies nothing")

        # -- openstack coe cluster upgrade upg <new> -----------------------
        old_machines = {m["metadata"]["name"] for m in self.machines(cluster)}
        self.conductor().cluster_upgrade(
            self.user_context, cluster, new, 1, cluster.default_ng_worker)
        # It returned once the release was applied, not after the rollout.
        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        self.assertEqual("v1.33.2", cluster.coe_version)
        self.assertEqual(new.uuid, cluster.cluster_template_id)
        # Inherited labels follow the template; the user's own stays.
        self.assertEqual({"boot_volume_size": "30", "boot_volume_type": "fast-ssd"},
                         cluster.labels)
        for ng in cluster.nodegroups:
            self.assertEqual(new.image_id, ng.image_id, ng.name)
            self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, ng.status, ng.name)
        self.assertEqual(len(revisions) + 1, len(self.release_revisions(cluster)))

        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        cluster = self.reload(cluster)
        self.assertEqual("v1.34.1", cluster.coe_version)
        self.assertIsNone(cluster.status_reason)
        for ng in cluster.nodegroups:
            self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, ng.status, ng.name)
        machines = self.machines(cluster)
        self.assertEqual(3, len(machines))
        self.assertEqual({"v1.34.1"}, {m["spec"]["version"] for m in machines})
        self.assertFalse(old_machines & {m["metadata"]["name"] for m in machines},
                         "every machine was replaced")
        self.assertEqual("", preview.render_values(self.user_context, cluster).diff)

        self.delete_cluster(cluster)

    def _refused(self, cluster, target, words):
        """An upgrade the sidecar refuses: NotSupported, nothing changed
        but what the installed Magnum's conductor itself writes."""
        revisions = self.release_revisions(cluster)
        before = self.reload(cluster)
        worker = before.default_ng_worker
        err = self.assertRaises(
            exception.NotSupported, self.conductor().cluster_upgrade,
            self.user_context, before, target, 1, worker)
        # As the user reads it: the shim writes the dots of errors crossing
        # magnum-api as U+2024 (errors.survive_first_sentence_cut).
        shown = str(err)
        self.assertNotIn(".", shown.rstrip("."), "magnum-api would cut this at its first '.'")
        for word in words:
            self.assertIn(word, shown.replace("\u2024", "."))
        after = self.reload(cluster)
        self.assertEqual(revisions, self.release_revisions(cluster))
        self.assertEqual(before.cluster_template_id, after.cluster_template_id)
        self.assertEqual(before.labels, after.labels)
        self.assertEqual("v1.33.2", after.coe_version)
        for ng in after.nodegroups:
            self.assertEqual(before.cluster_template.image_id, ng.image_id)
        worker = after.default_ng_worker
        if MAGNUM >= 18:
            self.assertEqual(before.status, after.status)
            self.assertEqual(before.status_reason, after.status_reason)
            return
        # Magnum 15-17: the conductor marks the cluster and the node group it
        # was given failed, whatever the exception.
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, after.status)
        self.assertEqual(str(err), after.status_reason)
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, worker.status)
        self.assertRaises(exception.NotSupported, self.conductor().cluster_upgrade,
                          self.user_context, after, target, 1, worker)
        # The way back: a resize to the same size (allowed from UPDATE_FAILED).
        self.conductor().cluster_resize(self.user_context, after, worker.node_count, [], worker)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        after = self.reload(cluster)
        self.assertIsNone(after.status_reason)
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, after.default_ng_worker.status)
