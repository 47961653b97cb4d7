"""The one place gRPC status codes become Magnum exceptions.

The sidecar reports bad input as INVALID_ARGUMENT with a message that names
the field or label, the value and what was expected; Magnum shows it to the
user as InvalidParameterValue (HTTP 400). FAILED_PRECONDITION means the
request cannot apply to the cluster as it is and nothing was changed: Magnum's
NotSupported, which the conductor (Magnum >= 18) treats as "leave the
cluster's state alone" for upgrades.

Only classes from magnum.common.exception are raised: it is the one module
Magnum's RPC layer lets through (rpc.ALLOWED_EXMODS), so the exceptions of
synchronous calls (upgrade, CA and credential rotation) reach magnum-api as
themselves, with their message, instead of as a RemoteError with a
traceback.
"""

from magnum.common import exception

from magnum_capi._grpc import grpc


def _literal(message):
    # MagnumException %-formats its message with its kwargs; a literal '%'
    # in the sidecar's text (e.g. "maxUnhealthy 100%") must survive that.
    return message.replace("%", "%%")


def from_rpc_error(err, method, address, timeout, attempts=1):
    code = err.code()
    details = err.details() or ""
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return exception.InvalidParameterValue(err=details)
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return exception.NotSupported(message=_literal(details))
    if code == grpc.StatusCode.UNAVAILABLE:
        return exception.MagnumException(
            message=_literal(
                "The magnum-capi sidecar at %s is unavailable (%s, %d "
                "attempt%s): %s"
                % (address, method, attempts, "" if attempts == 1 else "s",
                   details)
            )
        )
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return exception.MagnumException(
            message=_literal(
                "The magnum-capi sidecar at %s did not answer %s within %.0fs"
                % (address, method, timeout)
            )
        )
    return exception.MagnumException(
        message=_literal("%s failed: %s" % (method, details))
    )
