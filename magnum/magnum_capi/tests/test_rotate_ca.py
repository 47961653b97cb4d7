"""rotate_ca_certificate keeps Magnum on the CA the management cluster
holds: it keeps or deletes the new certificates by what the sidecar's
answer says it did, and upgrade_cluster records an upgrade the sidecar
says was applied although it failed."""

import unittest
from unittest import mock

from magnum.common import exception
from magnum.objects import fields

from magnum_capi._grpc import grpc
from magnum_capi import certificates
from magnum_capi import driver
from magnum_capi import errors
from magnum_capi.tests.test_errors_api import _RpcError  # noqa: I100
from magnum_capi.tests.test_upgrade_nodegroup import _Obj, _cluster

OLD = {"ca_cert_ref": "old-ca", "etcd_ca_cert_ref": "old-etcd",
       "front_proxy_ca_cert_ref": "old-proxy", "magnum_cert_ref": "old-magnum"}
NEW = {name: ref.replace("old-", "new-") for name, ref in OLD.items()}


class _Answer(_RpcError):
    """A failed call as gRPC reports it: the sidecar's answer (its
    trailers), or one gRPC core made when nobody answered."""

    def __init__(self, code, answered, trailers=()):
        super().__init__(code, "the step failed")
        self._answered, self._trailers = answered, tuple(trailers)

    def debug_error_string(self):
        return "Error received from peer" if self._answered else "Deadline Exceeded"

    def trailing_metadata(self):
        return self._trailers


def _raised(code, answered, trailers=()):
    return errors.from_rpc_error(_Answer(code, answered, trailers), "RotateCACertificate", 45,
                                 crosses_api=True)


APPLIED = ((errors.APPLIED_TRAILER, "true"),)


class RotateCATest(unittest.TestCase):

    def _rotate(self, answer):
        cluster = _Obj(uuid="c1", **NEW)
        # The request's content is not what is tested here.
        with mock.patch.object(driver.Driver, "_call", side_effect=answer), \
                mock.patch.object(driver.driver_pb2, "RotateCACertificateRequest"), \
                mock.patch.object(driver.convert, "spec"), \
                mock.patch.object(driver.convert, "request_context"), \
                mock.patch.object(certificates, "stored_references", return_value=dict(OLD)), \
                mock.patch.object(certificates, "authorities"), \
                mock.patch.object(certificates, "delete") as delete:
            raised = None
            try:
                driver.Driver().rotate_ca_certificate(mock.Mock(), cluster)
            except exception.MagnumException as e:
                raised = e
        deleted = {}
        for call in delete.call_args_list:
            deleted.update(call.args[2])
        return certificates.references(cluster), deleted, raised

    def test_keeps_or_deletes_by_the_answer(self):
        cases = [
            # name, the sidecar's answer, Magnum's references after, deleted
            ("success", None, NEW, OLD),
            ("failed after the point of no return (applied)",
             _raised(grpc.StatusCode.UNAVAILABLE, True, APPLIED), NEW, OLD),
            ("deadline after the point of no return (applied)",
             _raised(grpc.StatusCode.DEADLINE_EXCEEDED, True, APPLIED), NEW, OLD),
            ("failed before it: the sidecar put the old CA back",
             _raised(grpc.StatusCode.UNAVAILABLE, True), OLD, NEW),
            ("deadline before it, answered",
             _raised(grpc.StatusCode.DEADLINE_EXCEEDED, True), OLD, NEW),
            ("refused", _raised(grpc.StatusCode.INVALID_ARGUMENT, True), OLD, NEW),
            ("sidecar unreachable", _raised(grpc.StatusCode.UNAVAILABLE, False), OLD, NEW),
            # Nobody answered: the new certificates may be in use; kept.
            ("no answer within the deadline",
             _raised(grpc.StatusCode.DEADLINE_EXCEEDED, False), OLD, {}),
        ]
        for name, answer, refs, deleted in cases:
            with self.subTest(name):
                got_refs, got_deleted, raised = self._rotate(answer)
                self.assertEqual(refs, got_refs)
                self.assertEqual(deleted, got_deleted)
                self.assertEqual(answer is None, raised is None)

    def test_applied_failure_says_magnum_keeps_the_new_ca(self):
        _, _, raised = self._rotate(_raised(grpc.StatusCode.UNAVAILABLE, True, APPLIED))
        message = str(raised)
        self.assertIn("Magnum keeps them", message)
        # magnum-api shows the faultstring up to its first full stop.
        self.assertEqual(message.rstrip("."), message.split(".", 1)[0])


class UpgradeAppliedTest(unittest.TestCase):

    def _upgrade(self, answer):
        cluster, old, current = _cluster()
        passed = _Obj(**{k: v for k, v in cluster.nodegroups[1].__dict__.items() if k != "saved"})
        with mock.patch.object(driver.Driver, "_call", side_effect=answer):
            try:
                driver.Driver().upgrade_cluster(mock.Mock(), cluster, old, 2, passed)
            except exception.MagnumException as e:
                return cluster, old, e
        return cluster, old, None

    def test_applied_upgrade_is_recorded_failed(self):
        cluster, template, raised = self._upgrade(
            errors.from_rpc_error(_Answer(grpc.StatusCode.UNAVAILABLE, True, APPLIED),
                                  "UpgradeCluster", 45, crosses_api=True))
        self.assertIsNotNone(raised)
        self.assertEqual(template.uuid, cluster.cluster_template_id)
        for ng in cluster.nodegroups:
            self.assertEqual(template.image_id, ng.image_id, ng.name)
            self.assertEqual(fields.ClusterStatus.UPDATE_FAILED, ng.status, ng.name)

    def test_unchanged_upgrade_is_not_recorded(self):
        cluster, template, raised = self._upgrade(
            errors.from_rpc_error(_Answer(grpc.StatusCode.UNAVAILABLE, True),
                                  "UpgradeCluster", 45, crosses_api=True))
        self.assertIsNotNone(raised)
        self.assertEqual("tmpl-cur", cluster.cluster_template_id)
        self.assertEqual([], cluster.saved)


class AppliedTrailerContractTest(unittest.TestCase):
    """The shim reads the trailer the sidecar sets (server/errors.go)."""

    def test_same_key_as_the_sidecar(self):
        import os
        import re

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        with open(os.path.join(root, "server", "errors.go")) as f:
            go = f.read()
        self.assertEqual([errors.APPLIED_TRAILER],
                         re.findall(r'AppliedTrailer = "([^"]+)"', go))
