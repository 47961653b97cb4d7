"""The status write-back against a conductor that acts while a status is
being derived (see status.py: compare-and-save)."""

from unittest import mock

from magnum.objects import fields

from magnum_capi import client
from magnum_capi import convert
from magnum_capi.tests.functional import base
from magnumcapi.v1 import driver_pb2


class StatusRaceTest(base.FunctionalTestCase):
    def test_a_resize_during_the_status_call_is_not_clobbered(self):
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "race", node_count=1)
        worker = cluster.default_ng_worker

        # A first resize, rolled out by Cluster API but not yet seen by
        # Magnum's periodic sync.
        self.conductor().cluster_resize(self.user_context, cluster, 2, [], worker)
        self.wait_until(lambda: self._sidecar_says(cluster) == fields.ClusterStatus.UPDATE_COMPLETE,
                        "the sidecar to see the first resize complete")

        # The next sync's call to the sidecar: while it is under way the
        # user resizes again (the conductor allows it in UPDATE_IN_PROGRESS,
        # for the autoscaler) and the conductor saves the group's new count
        # and UPDATE_IN_PROGRESS.
        answers = []
        real_call = client.call

        def call_then_resize(method, request, timeout, metadata=(), **kw):
            resp = real_call(method, request, timeout, metadata, **kw)
            if method == "GetClusterStatus" and not answers:
                answers.append(resp.status)
                self.conductor().cluster_resize(
                    self.user_context, self.reload(cluster), 3, [],
                    self.nodegroup(cluster, worker.name))
            return resp

        with mock.patch.object(client, "call", side_effect=call_then_resize):
            self.sync_status(cluster)
        self.assertEqual(1, len(answers))
        # The answer was about the first resize, now finished...
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, answers[0].status)
        # ...but the conductor had moved on: nothing of it was written.
        cluster = self.reload(cluster)
        worker = self.nodegroup(cluster, worker.name)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, cluster.status)
        self.assertEqual(fields.ClusterStatus.UPDATE_IN_PROGRESS, worker.status)
        self.assertEqual(3, worker.node_count)

        # The next syncs follow the second resize to its end.
        self.wait_for_status(cluster, fields.ClusterStatus.UPDATE_COMPLETE)
        worker = self.nodegroup(cluster, worker.name)
        self.assertEqual(fields.ClusterStatus.UPDATE_COMPLETE, worker.status)
        self.assertEqual(3, worker.node_count)
        self.assertEqual(3, len(worker.node_addresses))
        self.delete_cluster(cluster)

    def _sidecar_says(self, cluster):
        """The status the sidecar derives now, without writing it."""
        request = driver_pb2.GetClusterStatusRequest(spec=convert.spec(self.reload(cluster)))
        return client.call("GetClusterStatus", request, 10.0).status.status
