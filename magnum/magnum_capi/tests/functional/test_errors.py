"""Errors Magnum can show its users: bad input (InvalidParameterValue naming
the label, the value and what was expected, with nothing applied), requests
that cannot apply (NotSupported), a sidecar that is down (bounded retries,
then an error naming its address) or hung (a deadline on every call), and
how each crosses Magnum's RPC layer to magnum-api."""

import os
import shutil
import socket
import sys
import tempfile
import threading

from magnum.common import exception
from magnum.common import rpc
from magnum.conductor.handlers.common import cert_manager
from magnum.conductor import utils as conductor_utils
from magnum.objects import fields
from oslo_messaging._drivers import common as rpc_common

from magnum_capi import client
from magnum_capi import driver as capi_driver
from magnum_capi import preview
from magnum_capi.tests.functional import base
from magnum_capi.tests.functional import stack as stack_mod
from magnumcapi.v1 import driver_pb2


def _over_rpc(err):
    """err as magnum-api gets it from a synchronous conductor call: through
    oslo.messaging's serialization, with Magnum's allowed exception
    modules. magnum-api shows format_message(): for these *_Remote copies,
    the original message without the conductor's traceback."""
    try:
        raise err
    except Exception:
        data = rpc_common.serialize_remote_exception(sys.exc_info())
    return rpc_common.deserialize_remote_exception(data, rpc.get_allowed_exmods())


class ErrorsTest(base.FunctionalTestCase):
    def stored_cluster(self, template, name, stack_id=None,
                       status=fields.ClusterStatus.CREATE_COMPLETE):
        """A cluster row with node groups and certificates, as Magnum holds
        it (no conductor, no release)."""
        cluster = self.new_cluster(template, name=name)
        cluster.status = status
        cluster.stack_id = stack_id
        cluster.create()
        for is_master in (True, False):
            ng = conductor_utils._get_nodegroup_object(
                self.user_context, cluster, 1, is_master=is_master)
            ng.status = status
            ng.create()
        cert_manager.generate_certificates_to_cluster(cluster, context=self.user_context)
        cluster.save()
        return self.reload(cluster)

    def release_names(self, cluster, prefix):
        return sorted(
            s["metadata"]["labels"]["name"]
            for s in self.kube_items("secrets", self.namespace(cluster), "owner=helm")
            if s["metadata"]["labels"]["name"].startswith(prefix))

    # -- bad input -----------------------------------------------------------

    def test_invalid_label_names_label_value_and_expectation_and_applies_nothing(self):
        template = self.create_template("v1.33.2", labels={"boot_volume_size": "abc"})
        cluster = self.new_cluster(template, name="badlabel")
        credentials = self.application_credentials()
        err = self.assertRaises(exception.InvalidParameterValue, self.create, cluster)
        message = str(err)
        self.assertIn("boot_volume_size", message)
        self.assertIn('"abc"', message)
        self.assertIn("expected", message)
        self.assertIn("integer", message)

        cluster = self.reload(cluster)
        self.assertEqual(fields.ClusterStatus.CREATE_FAILED, cluster.status)
        self.assertEqual(message, cluster.status_reason)
        self.assertIsNone(cluster.stack_id)
        # Nothing reached the management cluster or Keystone.
        self.assertEqual([], self.release_names(cluster, "badlabel-"))
        self.assertEqual([], self.driver_secrets(cluster))
        self.assertEqual([], [c for c in self.kube_items("clusters.cluster.x-k8s.io", self.namespace(cluster))
                              if c["metadata"]["name"].startswith("badlabel-")])
        self.assertEqual(credentials, self.application_credentials())

        # magnum-api shows it as Magnum's own exception (HTTP 400).
        remote = _over_rpc(err)
        self.assertIsInstance(remote, exception.InvalidParameterValue)
        self.assertEqual(400, remote.code)
        self.assertEqual(message, remote.format_message())

        # A cluster whose create failed before it was named deletes at once.
        self.delete_cluster(cluster)

    # -- cannot apply ----------------------------------------------------------

    def test_failed_precondition_is_not_supported(self):
        """A cluster this driver never created (no stack_id, e.g. one a Heat
        driver made) cannot be changed by it."""
        template = self.create_template("v1.33.2")
        cluster = self.stored_cluster(template, "foreign")
        err = self.assertRaises(exception.NotSupported, self.conductor().cluster_update,
                                self.user_context, cluster, 3, cluster.health_status,
                                cluster.health_status_reason)
        self.assertIn("stack_id", str(err))
        self.assertIn(cluster.uuid, str(err))
        remote = _over_rpc(err)
        self.assertIsInstance(remote, exception.NotSupported)
        self.assertEqual(400, remote.code)
        self.assertEqual(str(err), remote.format_message())
        cluster = self.reload(cluster)
        # Magnum's update handler fails the cluster and restores the count.
        self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, cluster.status)
        self.assertEqual(1, cluster.default_ng_worker.node_count)

    # -- the sidecar is down ---------------------------------------------------

    def _ensure_sidecar(self):
        self.stack.start_sidecar()  # a no-op while it runs

    def test_sidecar_down_bounded_retries_then_a_message_for_the_user(self):
        template = self.create_template("v1.33.2")
        cluster = self.stored_cluster(template, "down", stack_id="down-aaaaaaaaaaaa",
                                      status=fields.ClusterStatus.CREATE_IN_PROGRESS)
        self.addCleanup(self._ensure_sidecar)
        self.config(unavailable_retries=2, retry_backoff=0.1, group="magnum_capi")
        self.stack.stop_sidecar()

        err = self.assertRaises(exception.MagnumException, self.sync_status, cluster)
        self.assertIs(exception.MagnumException, type(err))
        # The user reads what failed and what to do; the operator's log
        # has the address.
        self.assertNotIn(self.stack.address.split("://")[-1], str(err))
        self.assertIn("The magnum-capi sidecar is unavailable", str(err))
        self.assertIn("GetClusterStatus, 3 attempts", str(err))
        self.assertEqual(fields.ClusterStatus.CREATE_IN_PROGRESS, self.reload(cluster).status)
        remote = _over_rpc(err)
        self.assertIsInstance(remote, exception.MagnumException)
        self.assertEqual(str(err), remote.format_message())

        # A sidecar that comes back while the shim is still retrying answers
        # the same call.
        self.config(unavailable_retries=10, retry_backoff=0.5, status_timeout=60.0,
                    group="magnum_capi")
        restart = threading.Timer(0.3, self.stack.start_sidecar)
        restart.start()
        self.addCleanup(restart.join)
        cluster = self.sync_status(cluster)
        restart.join()
        self.assertEqual(fields.ClusterStatus.CREATE_IN_PROGRESS, cluster.status)
        # The sidecar looked for the release and found none yet.
        self.assertIsNotNone(cluster.status_reason)

    # -- the sidecar hangs -------------------------------------------------------

    def test_deadline_on_every_call(self):
        """Against a socket that accepts connections and never answers (a
        hung sidecar), every driver method gives up at its deadline with an
        error naming the RPC and the deadline (the address is the
        operator's, in the log)."""
        hole = _BlackHole()
        self.addCleanup(hole.close)
        self.config(sidecar_address=hole.address, call_timeout=1.0,
                    create_call_timeout=1.0, status_timeout=0.5, group="magnum_capi")
        client.reset()
        self.addCleanup(client.reset)

        template = self.create_template("v1.33.2")
        cluster = self.stored_cluster(template, "hung", stack_id="hung-aaaaaaaaaaaa")
        worker = cluster.default_ng_worker
        drv = capi_driver.Driver()
        ctx = self.user_context
        calls = {
            "CreateCluster": lambda: drv.create_cluster(ctx, self.reload(cluster), 60),
            "UpdateCluster": lambda: drv.update_cluster(ctx, cluster),
            "ResizeCluster": lambda: drv.resize_cluster(ctx, cluster, None, 2, [], worker),
            "UpgradeCluster": lambda: drv.upgrade_cluster(ctx, cluster, template, 1, worker),
            "DeleteCluster": lambda: drv.delete_cluster(ctx, cluster),
            "GetClusterStatus": lambda: drv.update_cluster_status(self.admin_context, self.reload(cluster)),
            "GetClusterHealth": lambda: drv.get_monitor(self.admin_context, cluster).poll_health_status(),
            "CreateNodeGroup": lambda: drv.create_nodegroup(ctx, cluster, worker),
            "UpdateNodeGroup": lambda: drv.update_nodegroup(ctx, cluster, worker),
            "DeleteNodeGroup": lambda: drv.delete_nodegroup(ctx, cluster, worker),
            "RotateCACertificate": lambda: drv.rotate_ca_certificate(ctx, self.reload(cluster)),
            "RotateCredential": lambda: drv.rotate_credential(ctx, cluster),
            "RenderValues": lambda: preview.render_values(ctx, cluster),
        }
        # Every RPC of the service, each made by the shim.
        rpcs = set(driver_pb2.DESCRIPTOR.services_by_name["DriverService"].methods_by_name)
        self.assertEqual(rpcs, set(calls))
        for method, fn in sorted(calls.items()):
            err = self.assertRaises(exception.MagnumException, fn)
            # Errors of synchronous Magnum RPCs write their dots as U+2024
            # (errors.survive_first_sentence_cut).
            shown = str(err).replace("\u2024", ".")
            self.assertIn("did not answer %s within" % method, shown)
            self.assertNotIn(hole.address.split("://")[-1], shown)
        self.assertGreater(hole.connections, 0)


class _BlackHole(object):
    """A unix socket that accepts connections and never reads or answers."""

    def __init__(self):
        # The real temporary directory: Magnum's test base points tempfile
        # at a per-test one whose path may be too long for a unix socket.
        self.dir = tempfile.mkdtemp(prefix="magnum-capi-hole-", dir=stack_mod._TMP)
        path = os.path.join(self.dir, "hole.sock")
        self.address = "unix://" + path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.conns = []
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.connections += 1

    def close(self):
        self.sock.close()
        for conn in self.conns:
            conn.close()
        shutil.rmtree(self.dir, ignore_errors=True)
