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


# What a user can do when the sidecar, or a dependency of it, cannot be
# reached or does not answer.
_RETRY_LATER = "retry later, and tell the cloud operator if it persists"

# Codes worth the same call again after a pause, within its deadline: the
# sidecar (or the management API, or OpenStack) is down or restarting
# (UNAVAILABLE), or another operation on the cluster holds its Lease
# (ABORTED). Nothing was changed by the failed attempt, unless its answer
# says otherwise (APPLIED_TRAILER below): such an answer is not retried.
RETRIED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED)


def _sentence(text):
    """text as the start of a sentence: "the management cluster's ..."
    becomes "The management cluster's ..."."""
    return text[:1].upper() + text[1:]


def answered_by_sidecar(err):
    """Whether the sidecar sent this status (gRPC core says "Error received
    from peer"), rather than the shim failing to reach it."""
    debug = getattr(err, "debug_error_string", None)
    return bool(debug) and "Error received from peer" in (debug() or "")


def _quoting(request_id):
    """What the user quotes to the operator, who finds the cause in the
    sidecar's log (it logs every failed call with Magnum's request id)."""
    if request_id and request_id != "-":
        return "quoting request %s" % request_id
    return "quoting the cluster and the time of the failure"


# What a failed call did to the management cluster, for the operations
# whose Magnum record must follow it (CA rotation, upgrade): APPLIED, the
# sidecar says the change reached it all the same (the trailer below);
# UNCHANGED, the sidecar answered without that trailer (it undid what it had
# written), or was never reached; UNKNOWN, nobody answered within the
# deadline, so either may be true.
APPLIED, UNCHANGED, UNKNOWN = "applied", "unchanged", "unknown"

# The trailer of a failed call whose change was applied
# (server/errors.go, AppliedTrailer).
APPLIED_TRAILER = "magnum-capi-applied"


def outcome_of_rpc(err):
    """What the failed call err reports did (APPLIED, UNCHANGED, UNKNOWN)."""
    trailers = getattr(err, "trailing_metadata", None)
    for key, _ in (trailers() if trailers else None) or ():
        if key == APPLIED_TRAILER:
            return APPLIED
    if answered_by_sidecar(err) or err.code() == grpc.StatusCode.UNAVAILABLE:
        return UNCHANGED
    return UNKNOWN


def outcome(exc):
    """What the failed call that raised exc did (APPLIED, UNCHANGED,
    UNKNOWN); an exception raised before any call changed nothing."""
    return getattr(exc, "sidecar_outcome", UNCHANGED)


def applied(exc, what):
    """The exception to raise for a call whose change was applied although
    it failed: what says what Magnum now records, then the failure."""
    message = "%s: %s" % (what, str(exc).rstrip("."))
    err = exception.MagnumException(message=_literal(survive_first_sentence_cut(message)))
    err.sidecar_outcome = APPLIED
    return err


def from_rpc_error(err, method, timeout, attempts=1, crosses_api=False,
                   request_id=None):
    """The Magnum exception for a failed call (_from_rpc_error), carrying
    what the call did (outcome)."""
    exc = _from_rpc_error(err, method, timeout, attempts, crosses_api, request_id)
    exc.sidecar_outcome = outcome_of_rpc(err)
    return exc


def _from_rpc_error(err, method, timeout, attempts=1, crosses_api=False,
                    request_id=None):
    """The Magnum exception for a failed call. Its message reaches tenants
    (status_reason, the CLI's error): it names what failed and what to do,
    never the sidecar's address or gRPC's transport detail (the caller logs
    those for the operator). crosses_api: the call is a synchronous Magnum
    RPC (upgrade, CA and credential rotation) whose exception magnum-api
    shows to the user (survive_first_sentence_cut). request_id: Magnum's,
    which the sidecar logs the call under."""
    code = err.code()
    details = err.details() or ""
    shown = survive_first_sentence_cut if crosses_api else (lambda m: m)
    tries = "%s, %d attempt%s" % (method, attempts, "" if attempts == 1 else "s")
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return exception.InvalidParameterValue(err=shown(details))
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        message = details
    elif code == grpc.StatusCode.UNAVAILABLE and answered_by_sidecar(err):
        # A dependency of the sidecar is down (the management cluster's
        # API, OpenStack); its message names it, without addresses.
        message = "%s (%s): %s" % (_sentence(details), tries, _RETRY_LATER)
    elif code == grpc.StatusCode.UNAVAILABLE:
        message = ("The magnum-capi sidecar is unavailable (%s): %s"
                   % (tries, _RETRY_LATER))
    elif code == grpc.StatusCode.ABORTED:
        # Another operation on the cluster held it for the whole deadline;
        # the sidecar's message says so and what to do.
        message = "%s (%s)" % (_sentence(details), tries)
    elif code == grpc.StatusCode.INTERNAL:
        # An error no class explains: its detail is the operator's (the
        # sidecar sends a fixed sentence, server/errors.go internalMessage,
        # and logs the cause under the request id; one gRPC core made
        # itself is transport detail).
        message = ("The Cluster API driver failed unexpectedly (%s): ask your "
                   "cloud operator, %s" % (tries, _quoting(request_id)))
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED and answered_by_sidecar(err):
        # The sidecar answered: its work, not the sidecar, ran out of time.
        message = ("%s did not finish within %.0fs: %s"
                   % (method, timeout, _RETRY_LATER))
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
        message = ("The magnum-capi sidecar did not answer %s within %.0fs: %s"
                   % (method, timeout, _RETRY_LATER))
    else:
        message = "%s failed: %s" % (method, details)
    message = _literal(shown(message))
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return exception.NotSupported(message=message)
    return exception.MagnumException(message=message)
