"""CA rotation through Magnum's own CA conductor, credential rotation (Magnum
>= 21 has a credential conductor that calls the driver; Magnum 15 has none,
so the driver method is called as that conductor would), and health through
Magnum's monitor factory and periodic health job."""

import base64

from magnum.conductor.handlers.common import cert_manager
from magnum.conductor.handlers import ca_conductor
from magnum.conductor import monitors
from magnum.objects import fields
from magnum.service import periodic
from oslo_service import loopingcall

from magnum_capi import driver as capi_driver
from magnum_capi import monitor as capi_monitor
from magnum_capi.tests.functional import base


def _pem(data):
    return data.decode() if isinstance(data, bytes) else data


class RotationTest(base.FunctionalTestCase):
    def _secret(self, cluster, suffix):
        for s in self.kube_items("secrets", self.namespace(cluster)):
            if s["metadata"]["name"] == cluster.stack_id + suffix:
                return {k: base64.b64decode(v).decode() for k, v in s["data"].items()}
        self.fail("no Secret %s%s" % (cluster.stack_id, suffix))

    def _authorities(self, cluster):
        """Magnum's CA certificates for the cluster, as the CA Secrets name
        them."""
        ctx = self.user_context
        return {
            "-ca": _pem(cert_manager.get_cluster_ca_certificate(cluster, ctx).get_certificate()),
            "-etcd": _pem(cert_manager.get_cluster_ca_certificate(
                cluster, ctx, ca_cert_type="etcd").get_certificate()),
            "-proxy": _pem(cert_manager.get_cluster_ca_certificate(
                cluster, ctx, ca_cert_type="front_proxy").get_certificate()),
        }

    def test_health_ca_and_credential_rotation(self):
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "rot", node_count=1)

        # -- health: Magnum's monitor factory finds ours, and its periodic
        # job saves what the sidecar derived from Cluster API objects -------
        mon = monitors.create_monitor(self.admin_context, cluster)
        self.assertIsInstance(mon, capi_monitor.Monitor)
        mon.poll_health_status()
        self.assertEqual(fields.ClusterHealthStatus.HEALTHY, mon.data["health_status"])
        reasons = mon.data["health_status_reason"]
        self.assertIn("api", reasons)
        self.assertTrue(all(isinstance(v, str) for v in reasons.values()), reasons)
        try:
            periodic.ClusterHealthUpdateJob(self.admin_context, cluster).update_health_status()
        except loopingcall.LoopingCallDone:
            pass
        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterHealthStatus.HEALTHY, cluster.health_status)
        self.assertEqual(reasons, cluster.health_status_reason)

        # -- openstack coe ca rotate rot ------------------------------------
        before = self._authorities(cluster)
        for suffix, pem in before.items():
            self.assertEqual(pem, self._secret(cluster, suffix)["tls.crt"], suffix)
        old_machines = {m["metadata"]["name"] for m in self.machines(cluster)}
        ca_conductor.Handler().rotate_ca_certificate(self.user_context, cluster)
        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        after = self._authorities(cluster)
        for suffix in before:
            self.assertNotEqual(before[suffix], after[suffix], suffix)
            # The sidecar got the new material Magnum had just generated.
            self.assertEqual(after[suffix], self._secret(cluster, suffix)["tls.crt"], suffix)
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        machines = {m["metadata"]["name"] for m in self.machines(cluster)}
        self.assertEqual(2, len(machines))
        self.assertFalse(old_machines & machines, "every machine is rebuilt to trust the new CA")

        # -- credential rotation (PATCH /v1/credentials/rot on Magnum >= 21) -
        secret_before = self._secret(cluster, "-cloud-credentials")["clouds.yaml"]
        creds_before = self.application_credentials()
        old_ids = [c for c in creds_before if c in secret_before]
        self.assertEqual(1, len(old_ids), "the cluster's credential is in its Secret")
        capi_driver.Driver().rotate_credential(self.user_context, self.reload(cluster))
        secret_after = self._secret(cluster, "-cloud-credentials")["clouds.yaml"]
        creds_after = self.application_credentials()
        new_ids = [c for c in creds_after if c in secret_after]
        self.assertEqual(1, len(new_ids))
        self.assertNotEqual(old_ids, new_ids)
        self.assertNotIn(old_ids[0], creds_after, "the old credential is deleted")
        self.assertEqual(len(creds_before), len(creds_after))
        # Nothing rolls: the status is not touched.
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, self.reload(cluster).status)

        self.delete_cluster(cluster)
        self.assertNotIn(new_ids[0], self.application_credentials())
