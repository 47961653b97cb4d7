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
            "UpgradeCluster", "unix:///run/magnum-capi/magnum-capi.sock", 45,
            crosses_api=True)
        self.assertIsInstance(err, exception.NotSupported)
        shown = _title(str(err))
        self.assertEqual(self.REFUSAL.replace(".", "\u2024"), shown)

    def test_every_code_survives(self):
        for code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE,
                     grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.INTERNAL):
            err = errors.from_rpc_error(
                _RpcError(code, "chart 0.27.0 at 10.0.0.1 failed."), "RotateCACertificate",
                "unix:///run/magnum-capi/magnum-capi.sock", 45, crosses_api=True)
            self.assertEqual(str(err).rstrip("."), _title(str(err)), code)

    def test_asynchronous_calls_keep_their_dots(self):
        # status_reason is shown whole: nothing to work around there.
        err = errors.from_rpc_error(
            _RpcError(grpc.StatusCode.INVALID_ARGUMENT, "labels.boot_volume_size: invalid value"),
            "CreateCluster", "unix:///x.sock", 300)
        self.assertIn("labels.boot_volume_size", str(err))


if __name__ == "__main__":
    unittest.main()
