"""Run by test_eventlet.py as its own /usr/bin/python3 process, so that
eventlet's monkey patching (or a fork) cannot leak into the test run.

    eventlet_child.py green ADDRESS SPEC_FILE COUNT WATCHDOG_SECONDS [grpc-first]
    eventlet_child.py fork ADDRESS SPEC_FILE WATCHDOG_SECONDS

green: monkey-patches first, as Magnum 15-22's services do, then imports
Magnum and the shim and runs COUNT concurrent GetClusterStatus calls from
green threads while another green thread ticks; prints one JSON line. With
grpc-first, grpc is imported right after patching, before the shim (as
another library loaded earlier might), so its locks are green ones.
fork: calls the sidecar (the process now holds a channel), forks, calls from
the child and again from the parent; prints one JSON line.

A native watchdog thread ends the process with exit status 3 if it hangs.
"""

import json
import os
import sys


def _watchdog(seconds, threading_module, sleep):
    def bite():
        sleep(seconds)
        sys.stderr.write("watchdog: no answer after %ss; hung\n" % seconds)
        sys.stderr.flush()
        os._exit(3)

    threading_module.Thread(target=bite, daemon=True).start()


def _setup(address):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.abspath(os.path.join(here, "..", "..", "..")))
    import magnum.conf  # noqa: F401 - Magnum itself, as the conductor has it
    from magnum.drivers.common import driver as magnum_driver  # noqa: F401
    from oslo_config import cfg

    from magnum_capi import client
    from magnum_capi import conf  # noqa: F401 - registers [magnum_capi]
    from magnum_capi import driver  # noqa: F401 - the shim, as Magnum loads it
    from magnumcapi.v1 import driver_pb2

    cfg.CONF([], project="magnum", default_config_files=[])
    cfg.CONF.set_override("sidecar_address", address, group="magnum_capi")
    cfg.CONF.set_override("status_timeout", 60.0, group="magnum_capi")
    return client, driver_pb2


def _request(driver_pb2, spec_file):
    spec = driver_pb2.ClusterSpec()
    with open(spec_file, "rb") as f:
        spec.ParseFromString(f.read())
    return driver_pb2.GetClusterStatusRequest(spec=spec)


def green(address, spec_file, count, watchdog, grpc_first=False):
    import eventlet

    eventlet.monkey_patch()
    if grpc_first:
        import grpc  # noqa: F401
    from eventlet import patcher

    _watchdog(watchdog, patcher.original("threading"), patcher.original("time").sleep)
    client, driver_pb2 = _setup(address)
    request = _request(driver_pb2, spec_file)

    state = {"inflight": 0, "done": False, "ticks": 0, "ticks_in_flight": 0,
             "max_seen_in_flight": 0}

    def tick():
        while not state["done"]:
            eventlet.sleep(0.005)
            state["ticks"] += 1
            if state["inflight"]:
                state["ticks_in_flight"] += 1
                state["max_seen_in_flight"] = max(state["max_seen_in_flight"],
                                                  state["inflight"])

    def one(_):
        state["inflight"] += 1
        try:
            return client.call("GetClusterStatus", request, 60.0).status.status
        finally:
            state["inflight"] -= 1

    ticker = eventlet.spawn(tick)
    pool = eventlet.GreenPool(count)
    statuses = list(pool.imap(one, range(count)))
    state["done"] = True
    ticker.wait()
    from magnum_capi import _grpc

    print(json.dumps({
        "patched": client._eventlet_patched(),
        "native_threading": _grpc.NATIVE_THREADING,
        "statuses": statuses,
        "ticks": state["ticks"],
        "ticks_in_flight": state["ticks_in_flight"],
        "max_seen_in_flight": state["max_seen_in_flight"],
    }))


def fork(address, spec_file, watchdog):
    import threading
    import time

    _watchdog(watchdog, threading, time.sleep)
    client, driver_pb2 = _setup(address)
    request = _request(driver_pb2, spec_file)
    before = client.call("GetClusterStatus", request, 60.0).status.status
    parent_channel = id(client._channel_state["channel"])
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _watchdog(watchdog, threading, time.sleep)
            status = client.call("GetClusterStatus", request, 60.0).status.status
            result = {"status": status,
                      "new_channel": id(client._channel_state["channel"]) != parent_channel,
                      "pid": client._channel_state["pid"] == os.getpid()}
        except Exception as e:  # noqa: BLE001 - reported to the parent
            result = {"error": repr(e)}
        os.write(w, json.dumps(result).encode())
        os._exit(0)
    os.close(w)
    child = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        child += chunk
    _, code = os.waitpid(pid, 0)
    after = client.call("GetClusterStatus", request, 60.0).status.status
    print(json.dumps({
        "parent_before": before,
        "parent_after": after,
        "parent_kept_channel": id(client._channel_state["channel"]) == parent_channel,
        "child": json.loads(child.decode() or "{}"),
        "child_exit": code,
    }))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "green":
        green(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]),
              grpc_first=sys.argv[6:] == ["grpc-first"])
    elif mode == "fork":
        fork(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        sys.exit("unknown mode %r" % mode)
