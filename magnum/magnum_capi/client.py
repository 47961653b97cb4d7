"""The gRPC channel to the sidecar, and calls that are safe under eventlet.

Magnum 15-22 run under eventlet. grpcio blocks in C and does not cooperate
with eventlet's hub, so a call made on a green thread would freeze every
other green thread in the process (RPC handlers, periodic jobs). Calls
therefore run in eventlet's pool of native threads when eventlet has patched
the process, and directly otherwise (Magnum master uses real threads). grpc
itself is imported with the operating system's threading (_grpc.py), and the
channel's lock here is a native one: green locks contended by two native
threads deadlock.

One channel serves the whole process. It is created lazily, on first use and
again after a fork, because Magnum builds a new driver object for every call
(also in magnum-api) and a channel inherited across fork() is unusable.
"""

import os
import threading
import time

from oslo_config import cfg
from oslo_log import log as logging

from magnum_capi._grpc import grpc
from magnum_capi._grpc import NATIVE_THREADING
from magnum_capi import conf  # noqa: F401 - registers [magnum_capi]
from magnum_capi import errors
from magnumcapi.v1 import driver_pb2_grpc

LOG = logging.getLogger(__name__)
CONF = cfg.CONF



def _native_lock():
    """A lock of the operating system's threads. Once eventlet has patched
    the process, threading.Lock() is a green lock, which deadlocks when two
    native threads (eventlet's pool, where calls run) contend for it."""
    try:
        from eventlet import patcher
    except ImportError:
        return threading.Lock()
    return patcher.original("threading").Lock()


# Written only under _lock; read without it on the fast path.
_channel_state = {"pid": None, "address": None, "channel": None, "stub": None}
_lock = _native_lock()
_call_lock = _native_lock()


def _eventlet_patched():
    try:
        from eventlet import patcher
    except ImportError:
        return False
    return patcher.is_monkey_patched("thread") or patcher.is_monkey_patched(
        "socket"
    )


def _in_native_thread(fn):
    """Run fn where a blocking C call cannot stall eventlet's hub."""
    if _eventlet_patched():
        from eventlet import tpool

        if NATIVE_THREADING:
            return tpool.execute(fn)
        return tpool.execute(_serialized, fn)
    return fn()


def _serialized(fn):
    # grpc was imported before the shim with green locks (see _grpc.py):
    # one native thread at a time, so they are never contended.
    with _call_lock:
        return fn()


def _credentials():
    conf = CONF.magnum_capi

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    return grpc.ssl_channel_credentials(
        root_certificates=read(conf.tls_ca_file) if conf.tls_ca_file else None,
        private_key=read(conf.tls_key_file) if conf.tls_key_file else None,
        certificate_chain=read(conf.tls_cert_file)
        if conf.tls_cert_file
        else None,
    )


def _new_channel(address):
    options = [
        # The sidecar answers quickly or not at all; fail calls fast while it
        # restarts instead of queueing them behind reconnect backoff.
        ("grpc.initial_reconnect_backoff_ms", 200),
        ("grpc.max_reconnect_backoff_ms", 2000),
        ("grpc.enable_retries", 0),
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ]
    if address.startswith("unix:"):
        return grpc.insecure_channel(address, options=options)
    return grpc.secure_channel(address, _credentials(), options=options)


def _stub():
    address = CONF.magnum_capi.sidecar_address
    pid = os.getpid()
    state = _channel_state
    if state["pid"] == pid and state["address"] == address:
        return state["stub"]
    with _lock:
        if state["pid"] != pid or state["address"] != address:
            # A channel inherited from a parent process is abandoned, not
            # closed: closing it would touch the parent's C-core state.
            if state["pid"] == pid and state["channel"] is not None:
                state["channel"].close()
            channel = _new_channel(address)
            state.update(
                pid=pid,
                address=address,
                channel=channel,
                stub=driver_pb2_grpc.DriverServiceStub(channel),
            )
        return state["stub"]


def reset():
    """Forget the channel (tests change the sidecar address)."""
    with _lock:
        if _channel_state["channel"] is not None and _channel_state[
            "pid"
        ] == os.getpid():
            _channel_state["channel"].close()
        _channel_state.update(pid=None, address=None, channel=None, stub=None)


def call(method, request, timeout, metadata=(), crosses_api=False):
    """Call one DriverService method; return its response.

    timeout bounds the whole call, retries included: Magnum's synchronous
    RPCs (upgrade, CA rotation) must answer within rpc_response_timeout
    however the sidecar misbehaves. A call that ends UNAVAILABLE (the
    sidecar, the management API or OpenStack down) or ABORTED (another
    operation holds the cluster) is retried with backoff while the budget
    allows (errors.RETRIED), unless its answer says the change was applied
    all the same (errors.outcome_of_rpc), then logged with the address Magnum was
    configured with and the sidecar's detail, and reported to the user
    without them. Every gRPC error becomes the Magnum exception the
    conductor and API know how to show (see errors.py); crosses_api marks
    a synchronous Magnum RPC whose error magnum-api shows to the user.
    """
    conf = CONF.magnum_capi
    attempts = conf.unavailable_retries + 1
    backoff = conf.retry_backoff
    deadline = time.monotonic() + timeout
    # The sidecar logs the cause under the same request id.
    request_id = dict(metadata).get("x-openstack-request-id", "-")
    for attempt in range(1, attempts + 1):
        remaining = deadline - time.monotonic()
        try:
            return _in_native_thread(
                lambda: getattr(_stub(), method)(
                    request, timeout=max(remaining, 0.001),
                    metadata=list(metadata)
                )
            )
        except grpc.RpcError as e:
            code = e.code() if hasattr(e, "code") else None
            # An answer saying the change was applied is final: a retry
            # that failed before its own writes would hide it.
            retry = (
                code in errors.RETRIED
                and errors.outcome_of_rpc(e) != errors.APPLIED
                and attempt < attempts
                and deadline - time.monotonic() > backoff
            )
            if not retry:
                # The operator's detail; the exception is the tenant's.
                LOG.error(
                    "magnum-capi sidecar at %s: %s ended %s after %d "
                    "attempt(s) within %.0fs (request %s): %s",
                    conf.sidecar_address, method, code, attempt, timeout,
                    request_id,
                    e.details() if hasattr(e, "details") else e,
                )
                raise errors.from_rpc_error(
                    e, method, timeout, attempt, crosses_api=crosses_api,
                    request_id=request_id,
                )
            LOG.warning(
                "magnum-capi sidecar at %s: %s ended %s (%s; request %s); "
                "retrying in %.1fs (attempt %d of %d)",
                conf.sidecar_address,
                method,
                code,
                e.details(),
                request_id,
                backoff,
                attempt,
                attempts,
            )
            time.sleep(backoff)
            backoff *= 2
