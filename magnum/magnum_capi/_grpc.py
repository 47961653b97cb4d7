"""grpc, imported so that it works in a process eventlet has monkey-patched.

Magnum 15-22 monkey-patch every service before loading drivers, so a plain
`import grpc` there binds grpc's Python layer (grpc._channel, and cygrpc's
channel state) to eventlet's green threading: its locks and conditions become
green ones. The shim runs calls in eventlet's pool of native threads (a
blocking C call on a green thread would freeze the hub); two native threads
contending for one of those green locks then deadlock or fail with
"cannot switch to a different thread" (test_eventlet.py reproduces it).

So grpc and the modules it loads lazily are imported here, once, with the
original threading and time modules in sys.modules: grpc's own locks and
helper threads are then the operating system's, as grpc expects, and calls
may run concurrently in native threads.

If something imported grpc before the shim, in a patched process, its locks
are green and cannot be fixed here; NATIVE_THREADING is then False and the
client runs one call at a time (slower, but it does not hang).
"""

import importlib
import sys

# What `import grpc` and a unary call on an insecure or TLS channel load.
_MODULES = (
    "grpc",
    "grpc._channel",
    "grpc._utilities",
    "grpc._plugin_wrapping",
    "grpc._simple_stubs",
    "grpc.experimental",
)
# The patched modules grpc's Python layer uses.
_ORIGINALS = ("threading", "time")


def _patcher():
    try:
        from eventlet import patcher
    except ImportError:
        return None
    return patcher if patcher.is_monkey_patched("thread") else None


def _import():
    patcher = _patcher()
    if patcher is None or "grpc" in sys.modules:
        return importlib.import_module("grpc")
    saved = {name: sys.modules.get(name) for name in _ORIGINALS}
    try:
        for name in _ORIGINALS:
            sys.modules[name] = patcher.original(name)
        for name in _MODULES:
            importlib.import_module(name)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return sys.modules["grpc"]


def _native_threading(grpc):
    """Whether grpc's channel code uses the operating system's locks."""
    channel = importlib.import_module("grpc._channel")
    lock = channel.threading.Lock()
    return not type(lock).__module__.startswith("eventlet")


grpc = _import()
NATIVE_THREADING = _native_threading(grpc)
