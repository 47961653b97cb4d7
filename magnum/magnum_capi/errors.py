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


# What magnum-api shows for an exception of a synchronous call: its
# ParsableErrorMiddleware makes the error's title faultstring.split('.', 1)[0]
# and the openstack CLI prints only the title, so "upgrading Kubernetes from
# v1.33.2 to v1.35.0 ..." reached the user as "upgrading Kubernetes from v1".
# In such messages every full stop is written as U+2024 ONE DOT LEADER, which
# reads the same.
_DOT_LEADER = "\u2024"


def survive_first_sentence_cut(message):
    """The message with no '.' for magnum-api to cut it at (and no
    trailing one: the title is everything before the first)."""
    return message.rstrip(".").replace(".", _DOT_LEADER)


def _literal(message):
    # MagnumException %-formats its message with its kwargs; a literal '%'
    # in the sidecar's text (e.g. "maxUnhealthy 100%") must survive that.
    return message.replace("%", "%%")


def from_rpc_error(err, method, address, timeout, attempts=1,
                   crosses_api=False):
    """The Magnum exception for a failed call. crosses_api: the call is a
    synchronous Magnum RPC (upgrade, CA and credential rotation) whose
    exception magnum-api shows to the user (survive_first_sentence_cut)."""
    code = err.code()
    details = err.details() or ""
    shown = survive_first_sentence_cut if crosses_api else (lambda m: m)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return exception.InvalidParameterValue(err=shown(details))
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        message = details
    elif code == grpc.StatusCode.UNAVAILABLE:
        message = (
            "The magnum-capi sidecar at %s is unavailable (%s, %d attempt%s): %s"
            % (address, method, attempts, "" if attempts == 1 else "s", details))
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
        message = ("The magnum-capi sidecar at %s did not answer %s within %.0fs"
                   % (address, method, timeout))
    else:
        message = "%s failed: %s" % (method, details)
    message = _literal(shown(message))
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return exception.NotSupported(message=message)
    return exception.MagnumException(message=message)
