"""Failures on real Magnum: what `openstack coe cluster show` says when
Cluster API cannot finish.

The test bed's OpenStack provider (beside the real Cluster API controllers)
injects each failure through its rules ConfigMap (rules match Cluster names
that do not exist yet); clusters go through Magnum's
conductor handlers and its periodic status job, and the tests assert what
ends up in Magnum's database for the cluster and its node groups.

Timeouts are minutes to hours in production; these tests talk to a second
sidecar on the same stack whose timeouts are seconds (IMPATIENT), so the
shared sidecar's configuration is left alone.

Which CAPO behaviour the driver surfaces for an OpenStack quota error: CAPO
v0.14 retries a refused load balancer for ever, with the OpenStack error as
the OpenStackCluster's Ready message; it sets failureReason/failureMessage
(terminal) only for errors it gives up on. The driver shows OpenStack's
message in status_reason as soon as CAPO reports it, keeps the cluster in
CREATE_IN_PROGRESS while CAPO retries (freeing quota lets it finish), fails
it when create_timeout runs out, still quoting OpenStack, and fails it at
once when CAPO's error is terminal.
"""

import json
import os
import tempfile
import threading
import time

from magnum import objects
from magnum.objects import fields

from magnum_capi import client
from magnum_capi.tests.functional import base

IMPATIENT = {
    "MAGNUM_CAPI_TIMEOUTS_DEFAULTCREATE": "30s",
    "MAGNUM_CAPI_TIMEOUTS_UPDATE": "20s",
    "MAGNUM_CAPI_TIMEOUTS_DELETE": "20s",
    "MAGNUM_CAPI_TIMEOUTS_ADDONFAILUREGRACE": "5s",
}

QUOTA = "Quota has been met for resources: Load Balancer"
# What the tenant can do about it (capistatus/tenant_text_openstack.go).
QUOTA_REMEDY = "The project's load balancer quota is used up"
S = fields.ClusterStatus

_rules_lock = threading.Lock()
_rules = {}


def _write_rules(stack):
    """The fault rules ConfigMap holds every test's rules."""
    data = [r for rules in _rules.values() for r in rules]
    cm = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "capisim", "namespace": "capisim-system"},
        "data": {"rules": json.dumps(data)},
    }
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(cm, f)
        stack.kubectl("apply", "-f", path)
    finally:
        os.unlink(path)


class FailuresTest(base.FunctionalTestCase):
    def setUp(self):
        super().setUp()
        self.patient = self.stack.address
        self.use_sidecar(self.stack.extra_sidecar("impatient", IMPATIENT))
        try:
            self.stack.kubectl("create", "namespace", "capisim-system")
        except Exception:  # noqa: BLE001 - AlreadyExists
            pass

    def assertTenantReads(self, reason, remedy):
        """status_reason built from OpenStack's refusal names the remedy
        and none of the URLs, hosts and bodies CAPO quoted."""
        self.assertIn(remedy, reason)
        for leak in ("://", "example.test", "Expected HTTP response code", '{"'):
            self.assertNotIn(leak, reason)

    def use_sidecar(self, address):
        self.config(sidecar_address=address, group="magnum_capi")
        client.reset()

    def inject(self, **rule):
        """Add a fault rule for this test; removed at cleanup."""
        key = self.id()
        with _rules_lock:
            _rules.setdefault(key, []).append(rule)
            _write_rules(self.stack)

        def remove():
            with _rules_lock:
                _rules.pop(key, None)
                _write_rules(self.stack)
        self.addCleanup(remove)

    def cleanup_cluster(self, cluster):
        """After the test (and after its faults are removed: cleanups run
        last-in first-out), delete the cluster through the shared sidecar,
        whose timeouts leave time for an ordinary deletion."""
        def delete():
            if self._gone(cluster):
                return
            self.use_sidecar(self.patient)
            c = self.reload(cluster)
            if c.status != S.DELETE_IN_PROGRESS:
                self.conductor().cluster_delete(self.user_context, cluster.uuid)
            self.wait_for_status(cluster, S.DELETE_COMPLETE)
        self.addCleanup(delete)

    def wait_until(self, cluster, want, timeout=180):
        """Run the periodic sync until the cluster is in want, whatever it
        passes through (wait_for_status fails on any other final state);
        return the (status, reason) pairs seen, in order."""
        final = {S.CREATE_COMPLETE, S.UPDATE_COMPLETE, S.DELETE_COMPLETE,
                 S.CREATE_FAILED, S.UPDATE_FAILED, S.DELETE_FAILED}
        seen = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            c = self.sync_status(cluster)
            if not seen or seen[-1] != (c.status, c.status_reason):
                seen.append((c.status, c.status_reason))
            if c.status == want:
                return seen
            if c.status in final:
                self.fail("reached %s waiting for %s; seen %s" % (c.status, want, seen))
            time.sleep(0.2)
        self.fail("still %s after %ss waiting for %s; seen %s"
                  % (seen[-1] if seen else "?", timeout, want, seen))

    def groups(self, cluster):
        return {ng.role: ng for ng in objects.NodeGroup.list(self.admin_context, cluster.uuid)}

    # -- OpenStack quota -------------------------------------------------

    def test_quota_retrying_shows_openstack_then_times_out(self):
        """CAPO retries the refused load balancer. Magnum shows Octavia's
        quota message while the cluster is in progress, and fails it when
        its create timeout runs out: the configured default for
        create_timeout 0 (30 s here) and Magnum's own create_timeout (1
        minute) for the other."""
        self.inject(cluster="fail-quota-*", infraFailure="")
        template = self.create_template()
        default = self.new_cluster(template, name="fail-quota-default", create_timeout=0)
        own = self.new_cluster(template, name="fail-quota-own", create_timeout=1)
        for c in (own, default):
            self.create(c, master_count=1, node_count=1, timeout=c.create_timeout)
            self.cleanup_cluster(c)

        seen = self.wait_until(default, S.CREATE_FAILED, timeout=120)
        in_progress = [r for s, r in seen if s == S.CREATE_IN_PROGRESS and r and QUOTA in r]
        self.assertTrue(in_progress, "the quota error was never shown while in progress: %s" % seen)
        self.assertTrue(in_progress[0].startswith("waiting for: OpenStackCluster "), in_progress[0])
        # The other cluster, with its own longer timeout, still retries.
        other = self.sync_status(own)
        self.assertEqual(S.CREATE_IN_PROGRESS, other.status)
        self.assertIn(QUOTA, other.status_reason)

        failed = self.reload(default)
        want = "timed out after 30s waiting for: OpenStackCluster %s" % failed.stack_id
        self.assertTrue(failed.status_reason.startswith(want), failed.status_reason)
        self.assertIn(QUOTA, failed.status_reason)
        self.assertTenantReads(failed.status_reason, QUOTA_REMEDY)
        for role, ng in self.groups(failed).items():
            self.assertEqual(S.CREATE_FAILED, ng.status, role)
            self.assertTrue(ng.status_reason.startswith("timed out after 30s waiting for: "),
                            (role, ng.status_reason))

        self.wait_until(own, S.CREATE_FAILED, timeout=120)
        failed = self.reload(own)
        want = "timed out after 1 minute waiting for: OpenStackCluster %s" % failed.stack_id
        self.assertTrue(failed.status_reason.startswith(want), failed.status_reason)
        self.assertIn(QUOTA, failed.status_reason)
        for role, ng in self.groups(failed).items():
            self.assertEqual(S.CREATE_FAILED, ng.status, role)

    def test_quota_terminal_fails_at_once(self):
        """CAPO gave up (failureReason/failureMessage): CREATE_FAILED at
        once, long before any timeout, quoting OpenStack."""
        self.inject(cluster="fail-terminal-*", infraFailure="", infraFailureTerminal=True)
        cluster = self.new_cluster(self.create_template(), name="fail-terminal")
        self.create(cluster, master_count=1, node_count=1)
        self.cleanup_cluster(cluster)

        self.wait_until(cluster, S.CREATE_FAILED, timeout=60)
        failed = self.reload(cluster)
        want = "OpenStackCluster %s failed: " % failed.stack_id
        self.assertTrue(failed.status_reason.startswith(want), failed.status_reason)
        self.assertIn(QUOTA, failed.status_reason)
        self.assertTenantReads(failed.status_reason, QUOTA_REMEDY)
        self.assertIn("(UpdateError)", failed.status_reason)
        self.assertNotIn("timed out", failed.status_reason)
        for role, ng in self.groups(failed).items():
            self.assertEqual(S.CREATE_FAILED, ng.status, role)
            self.assertEqual(failed.status_reason, ng.status_reason, role)

    # -- addons ------------------------------------------------------------

    def test_addon_failed_after_grace(self):
        """An addon the provider reports Failed: in progress, saying it is
        retried, during the grace period (5 s here); CREATE_FAILED naming
        the addon and the provider's message after it."""
        message = "installing tigera-operator: context deadline exceeded"
        self.inject(cluster="fail-addon-*", addonFailure="*-cni-calico", addonFailureMessage=message)
        cluster = self.new_cluster(self.create_template(), name="fail-addon")
        self.create(cluster, master_count=1, node_count=1)
        self.cleanup_cluster(cluster)

        seen = self.wait_until(cluster, S.CREATE_FAILED, timeout=180)
        retrying = [r for s, r in seen if s == S.CREATE_IN_PROGRESS and r and "retrying" in r]
        self.assertTrue(retrying, "no in-progress reason during the grace period: %s" % seen)
        self.assertTrue(retrying[0].startswith(
            "waiting for: addon cni-calico failed, retrying for up to 5s: " + message), retrying[0])
        failed = self.reload(cluster)
        self.assertEqual("addon cni-calico failed: " + message, failed.status_reason)
        # The machines were all up: the node groups completed; only the
        # cluster failed.
        for role, ng in self.groups(failed).items():
            self.assertEqual(S.CREATE_COMPLETE, ng.status, role)
            self.assertIsNone(ng.status_reason, role)

    # -- a rollout that never finishes -------------------------------------

    def test_upgrade_stuck_times_out(self):
        """An upgrade whose new machines never become ready:
        UPDATE_FAILED after the update timeout (20 s here), naming what was
        still rolling, for the cluster and each node group."""
        self.inject(cluster="fail-rollout-*", stuckRollout=True)
        cluster = self.create_ready_cluster(self.create_template("v1.33.2"), "fail-rollout", node_count=1)
        self.cleanup_cluster(cluster)
        new = self.create_template("v1.34.1")

        self.conductor().cluster_upgrade(self.user_context, cluster, new, 1, cluster.default_ng_worker)
        self.assertEqual(S.UPDATE_IN_PROGRESS, self.reload(cluster).status)
        seen = self.wait_until(cluster, S.UPDATE_FAILED, timeout=120)
        self.assertIn(S.UPDATE_IN_PROGRESS, [s for s, _ in seen])

        failed = self.reload(cluster)
        self.assertTrue(failed.status_reason.startswith("timed out after 20s waiting for: control plane: "),
                        failed.status_reason)
        self.assertIn("upgrading from v1.33.2 to v1.34.1", failed.status_reason)
        self.assertIn("its OpenStack server is building", failed.status_reason)
        self.assertIn("node group default-worker: ", failed.status_reason)
        groups = self.groups(failed)
        self.assertEqual(S.UPDATE_FAILED, groups["master"].status)
        self.assertTrue(groups["master"].status_reason.startswith("timed out after 20s waiting for: "),
                        groups["master"].status_reason)
        self.assertIn("upgrading from v1.33.2 to v1.34.1", groups["master"].status_reason)
        # The replacement machine CAPO never finished building.
        self.assertIn("its OpenStack server is building", groups["master"].status_reason)
        self.assertEqual(S.UPDATE_FAILED, groups["worker"].status)
        self.assertTrue(groups["worker"].status_reason.startswith("timed out after 20s waiting for: "),
                        groups["worker"].status_reason)
        # Magnum keeps the old version: the rollout did not happen.
        self.assertEqual("v1.33.2", failed.coe_version)

    # -- a deletion stuck on a finalizer ----------------------------------

    def test_delete_stuck_on_finalizer(self):
        """CAPO cannot delete the network, so the OpenStackCluster keeps its
        finalizer: DELETE_FAILED after the delete timeout (20 s here),
        naming the object and the finalizer holding it. Once the cause is
        gone, deleting again completes and cleans up."""
        cluster = self.create_ready_cluster(self.create_template(), "fail-delete", node_count=1)
        self.cleanup_cluster(cluster)
        self.inject(cluster="fail-delete-*", stuckDeletion=True)
        self.conductor().cluster_delete(self.user_context, cluster.uuid)
        seen = self.wait_until(cluster, S.DELETE_FAILED, timeout=120)
        self.assertIn(S.DELETE_IN_PROGRESS, [s for s, _ in seen])

        failed = self.reload(cluster)
        # CAPO's reason (Neutron's answer) first, then the finalizer.
        want = "timed out after 20s waiting for deletion of: OpenStackCluster %s: " % failed.stack_id
        self.assertTrue(failed.status_reason.startswith(want), failed.status_reason)
        self.assertIn("NetworkInUse", failed.status_reason)
        self.assertTenantReads(
            failed.status_reason,
            "delete the load balancers, servers and ports you created in it, "
            "then delete the cluster again")
        self.assertIn("OpenStackCluster %s (finalizers: " % failed.stack_id, failed.status_reason)
        self.assertIn("Cluster %s (finalizers: " % failed.stack_id, failed.status_reason)
        # Everything but the infrastructure is gone: the node groups are.
        for role, ng in self.groups(failed).items():
            self.assertEqual(S.DELETE_COMPLETE, ng.status, role)
        self.assertTrue(self.driver_secrets(failed), "the driver's Secrets went before the cluster did")

        # The network is freed (the fault removed): a new delete finishes.
        self.remove_rules()
        self.conductor().cluster_delete(self.user_context, cluster.uuid)
        self.wait_for_status(cluster, S.DELETE_COMPLETE)
        self.assertEqual([], self.driver_secrets(failed))

    def remove_rules(self):
        """Remove this test's fault rules now rather than at cleanup."""
        with _rules_lock:
            _rules.pop(self.id(), None)
            _write_rules(self.stack)
