"""Messages of synchronous calls survive magnum-api's first-sentence cut."""

import unittest

from magnum.common import exception

from magnum_capi._grpc import grpc
from magnum_capi import errors


class _RpcError(grpc.RpcError):
    def __init__(self, code, details):
        super().__init__()
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


def _title(faultstring):
    """What magnum-api's ParsableErrorMiddleware shows (Magnum 15-23)."""
    return faultstring.split(".", 1)[0]


class FirstSentenceCutTest(unittest.TestCase):
    REFUSAL = ("upgrading Kubernetes from v1.33.2 to v1.35.0 skips a minor "
               "version; upgrade to v1.34 first")

    def test_synchronous_call_keeps_the_whole_message(self):
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.FAILED_PRECONDITION, self.REFUSAL),
            "UpgradeCluster", 45, crosses_api=True)
        self.assertIsInstance(err, exception.NotSupported)
        shown = _title(str(err))
        self.assertEqual(self.REFUSAL.replace(".", "\u2024"), shown)

    def test_every_code_survives(self):
        for code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE,
                     grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL):
            err = errors.from_rpc_error(
                _RpcError(code, "chart 0.27.0 at 10.0.0.1 failed."), "RotateCACertificate",
                45, crosses_api=True)
            self.assertEqual(str(err).rstrip("."), _title(str(err)), code)

    def test_asynchronous_calls_keep_their_dots(self):
        # status_reason is shown whole: nothing to work around there.
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.INVALID_ARGUMENT, "labels.boot_volume_size: invalid value"),
            "CreateCluster", 300)
        self.assertIn("labels.boot_volume_size", str(err))


class _PeerError(_RpcError):
    """A status the sidecar sent, as gRPC core describes it."""

    def debug_error_string(self):
        return 'UNKNOWN:Error received from peer unix:/run/x.sock {grpc_status:14}'


class TenantMessageTest(unittest.TestCase):
    """What the user reads names what failed and what to do, never the
    sidecar's address or gRPC's transport detail."""

    TRANSPORT = ("failed to connect to all addresses; last error: UNKNOWN: "
                 "unix:/run/magnum-capi/magnum-capi.sock: No such file or directory")

    def test_unreachable_sidecar(self):
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.UNAVAILABLE, self.TRANSPORT), "ResizeCluster", 45, 4)
        self.assertEqual("The magnum-capi sidecar is unavailable (ResizeCluster, 4 attempts): "
                         "retry later, and tell the cloud operator if it persists", str(err))

    def test_silent_sidecar(self):
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"), "CreateCluster", 300)
        self.assertEqual("The magnum-capi sidecar did not answer CreateCluster within 300s: "
                         "retry later, and tell the cloud operator if it persists", str(err))

    def test_a_dependency_of_the_sidecar_is_down(self):
        err = errors.from_rpc_error(
            _PeerError(grpc.StatusCode.UNAVAILABLE, "Keystone is unavailable: connection refused"),
            "CreateCluster", 300, 2)
        self.assertEqual("Keystone is unavailable: connection refused (CreateCluster, 2 attempts): "
                         "retry later, and tell the cloud operator if it persists", str(err))


if __name__ == "__main__":
    unittest.main()

    def test_internal_error_names_the_request(self):
        # Whatever the sidecar (or gRPC core) put in the details, the user
        # reads one sentence and the id the operator looks up.
        detail = ('renewing: Post "https://keystone.internal:5000/v3/auth/tokens": '
                  'dial tcp 10.0.0.5:5000: connect: connection refused')
        err = errors.from_rpc_error(
            _PeerError(grpc.StatusCode.INTERNAL, detail), "CreateCluster", 300,
            request_id="req-0c9d2e7a-5b1f-4e3d-8a61-c1d2e3f4a5b6")
        self.assertEqual(
            "The Cluster API driver failed unexpectedly (CreateCluster, 1 attempt): "
            "ask your cloud operator, quoting request "
            "req-0c9d2e7a-5b1f-4e3d-8a61-c1d2e3f4a5b6", str(err))

    def test_internal_error_without_a_request_id(self):
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.INTERNAL, "boom at 10.0.0.5"), "DeleteCluster", 300,
            request_id="-")
        self.assertNotIn("10.0.0.5", str(err))
        self.assertIn("quoting the cluster and the time of the failure", str(err))
