"""The vertical slice on real Magnum: create -> CREATE_COMPLETE -> delete ->
DELETE_COMPLETE, through Magnum's conductor handler, the shim, the sidecar,
Helm and the test stack, asserting every field the driver writes."""

import re

from magnum.common import exception
from magnum import objects
from magnum.objects import fields

from magnum_capi.tests.functional import base


class LifecycleTest(base.FunctionalTestCase):
    def test_create_then_delete(self):
        template = self.create_template("v1.33.2")
        cluster = self.new_cluster(template, name="lifecycle")
        self.create(cluster, master_count=1, node_count=2)

        cluster = self.reload(cluster)
        self.assertRegex(cluster.stack_id, r"^lifecycle-[a-z2-7]{12}$")
        self.assertEqual(fields.ClusterStatus.CREATE_IN_PROGRESS, cluster.status)
        for ng in cluster.nodegroups:
            # The conductor copies stack_id to the node groups.
            self.assertEqual(cluster.stack_id, ng.stack_id)

        seen = self.wait_for_status(cluster, fields.ClusterStatus.CREATE_COMPLETE)
        cluster = self.reload(cluster)
        self.assertRegex(cluster.api_address, r"^https://127\.0\.0\.1:[0-9]+$")
        self.assertEqual("v1.33.2", cluster.coe_version)
        self.assertIsNone(cluster.status_reason)
        by_role = {ng.role: ng for ng in cluster.nodegroups}
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, by_role["master"].status)
        self.assertEqual(1, by_role["master"].node_count)
        self.assertEqual(1, len(by_role["master"].node_addresses))
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, by_role["worker"].status)
        self.assertEqual(2, by_role["worker"].node_count)
        self.assertEqual(2, len(by_role["worker"].node_addresses))
        for addr in by_role["worker"].node_addresses:
            self.assertTrue(re.match(r"^\d+\.\d+\.\d+\.\d+$", addr), addr)
        self.assertEqual(1, cluster.master_count)
        self.assertEqual(2, cluster.node_count)
        self.assertTrue(any(s[0] == fields.ClusterStatus.CREATE_IN_PROGRESS for s in seen))
        # Magnum 15's conductor made a real trustee and trust in Keystone.
        trust_id, trustee_id = cluster.trust_id, cluster.trustee_user_id
        self.assertTrue(trust_id and trustee_id)
        self.assertEqual(200, self._identity_get("/OS-TRUST/trusts/" + trust_id))

        self.conductor().cluster_delete(self.user_context, cluster.uuid)
        cluster_after = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.DELETE_IN_PROGRESS, cluster_after.status)
        self.wait_for_status(cluster, fields.ClusterStatus.DELETE_COMPLETE)
        # Magnum's periodic job destroys the rows once the driver says so.
        self.assertRaises(exception.ClusterNotFound,
                          objects.Cluster.get_by_uuid, self.admin_context, cluster.uuid)
        self.assertEqual([], objects.NodeGroup.list(self.admin_context, cluster.uuid))
        # ... and the shim removed them with the cluster (Magnum 15-17 do not).
        self.assertEqual(404, self._identity_get("/OS-TRUST/trusts/" + trust_id))
        self.assertEqual(404, self._identity_get("/users/" + trustee_id, self.service_session()))

    def _identity_get(self, path, session=None):
        """Status of a Keystone GET, as the user by default (a trust is
        readable by its trustor; users only by an admin)."""
        session = session or self.keystone
        return session.get(self.info["auth_url"] + path, raise_exc=False).status_code
