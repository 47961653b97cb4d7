"""The shim under eventlet (Magnum 15-22 run their services monkey-patched)
and across fork (oslo.service forks conductor workers, and re-forks dead
ones from a parent that has been polling status): each in its own
/usr/bin/python3 process (eventlet_child.py) against the running sidecar."""

import json
import os
import subprocess

from magnum.objects import fields

from magnum_capi import convert
from magnum_capi.tests.functional import base
from magnum_capi.tests.functional import stack as stack_mod

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eventlet_child.py")
WATCHDOG = 120  # seconds; a hang ends the child with exit status 3


class EventletTest(base.FunctionalTestCase):
    def test_green_threads_and_fork(self):
        """One real cluster (CREATE_COMPLETE) for the three child runs."""
        template = self.create_template("v1.33.2")
        cluster = self.create_ready_cluster(template, "green", node_count=1)
        self.spec_file = os.path.join(self.stack.dir, "green-spec.pb")
        with open(self.spec_file, "wb") as f:
            f.write(convert.spec(cluster).SerializeToString())
        self.check_50_concurrent_status_calls_from_green_threads()
        self.check_green_calls_when_grpc_was_imported_first()
        self.check_fork_after_the_parent_made_a_channel()
        self.delete_cluster(cluster)

    def child(self, *args):
        proc = subprocess.run(
            ["/usr/bin/python3", CHILD, *args], capture_output=True, text=True,
            env=dict(stack_mod._ENV, PYTHONWARNINGS="ignore"), timeout=WATCHDOG + 60)
        self.assertNotEqual(3, proc.returncode, "the child hung:\n" + proc.stderr[-3000:])
        self.assertEqual(0, proc.returncode, proc.stderr[-3000:])
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def assert_green_calls(self, out):
        self.assertTrue(out["patched"])
        self.assertEqual([fields.ClusterStatus.CREATE_COMPLETE] * 50, out["statuses"])
        # The hub kept running while calls were in flight: a blocking call
        # on a green thread would have stopped every other green thread, the
        # ticker included, until it returned.
        self.assertGreater(out["ticks_in_flight"], 0, out)
        self.assertGreater(out["max_seen_in_flight"], 1, out)

    def check_50_concurrent_status_calls_from_green_threads(self):
        out = self.child("green", self.stack.address, self.spec_file, "50", str(WATCHDOG))
        self.assert_green_calls(out)
        # grpc was imported with the operating system's threading.
        self.assertTrue(out["native_threading"])

    def check_green_calls_when_grpc_was_imported_first(self):
        """Another library imported grpc after patching, before the shim:
        grpc's locks are green and the shim runs one call at a time."""
        out = self.child("green", self.stack.address, self.spec_file, "50", str(WATCHDOG),
                         "grpc-first")
        self.assertFalse(out["native_threading"])
        self.assert_green_calls(out)

    def check_fork_after_the_parent_made_a_channel(self):
        out = self.child("fork", self.stack.address, self.spec_file, str(WATCHDOG))
        self.assertEqual(0, out["child_exit"], out)
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, out["child"].get("status"), out)
        self.assertTrue(out["child"]["new_channel"], out)
        self.assertTrue(out["child"]["pid"], out)
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, out["parent_before"])
        self.assertEqual(fields.ClusterStatus.CREATE_COMPLETE, out["parent_after"])
        self.assertTrue(out["parent_kept_channel"], out)
