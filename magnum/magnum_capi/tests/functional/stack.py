"""The test stack and the sidecar, as processes shared by every test.

The stack is test/cmd/testbed (a real kube-apiserver with the Cluster API
CRDs and conversion, the real Cluster API controllers, a chart repository, a real Keystone
and OpenStack API doubles); the sidecar is the real `magnum-capi serve`
binary on a unix socket, which the test bed starts with the same starter
(test/harness) and typed configuration as every Go test. More sidecars are
started and stopped through the test bed's sidecars API. Both start once
per test process and stop at exit.
"""

import atexit
import ctypes
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 4))
# Read at import: Magnum's test base points tempfile at a per-test directory
# that is removed after each test, and the stack outlives tests.
_TMP = tempfile.gettempdir()
# Likewise oslotest's base points HOME at a temporary directory; the Go
# toolchain, its caches and the cached test-bed binaries live in the real one.
_ENV = dict(os.environ)

_stack = None


class StackError(Exception):
    pass


_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """Runs in the child before exec: SIGTERM it when this test process
    dies, however it ends (a killed pytest runs no atexit), so that the test
    bed stops itself (its kube-apiserver and etcd guard themselves too)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _binary(env, package, name, workdir):
    """A binary from $env, else built from package into workdir."""
    path = os.environ.get(env)
    if path:
        return path
    path = os.path.join(workdir, name)
    subprocess.run(["go", "build", "-o", path, package], cwd=REPO, check=True, env=_ENV)
    return path


def _wait_for(predicate, timeout, what, proc=None, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            raise StackError(
                "%s exited with %s while waiting for %s%s"
                % (proc.args[0], proc.returncode, what, _tail(log))
            )
        time.sleep(0.1)
    raise StackError("timed out after %ss waiting for %s%s" % (timeout, what, _tail(log)))


def _tail(path, lines=40):
    if not path or not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return "\n--- %s ---\n%s" % (path, "".join(f.readlines()[-lines:]))


class Stack:
    def __init__(self, step="100ms"):
        self.dir = tempfile.mkdtemp(prefix="magnum-capi-pytest-", dir=_TMP)
        self.info_file = os.path.join(self.dir, "info.json")
        self.testbed_log = os.path.join(self.dir, "testbed.log")
        self._procs = []
        bindir = os.path.join(self.dir, "bin")
        os.makedirs(bindir)
        testbed = _binary("MAGNUM_CAPI_TESTBED_BIN", "./test/cmd/testbed", "testbed", bindir)
        sidecar_bin = _binary("MAGNUM_CAPI_BIN", "./cmd/magnum-capi", "magnum-capi", bindir)
        env = dict(_ENV, MAGNUM_CAPI_REPO=REPO)
        self.testbed = self._start(
            [testbed, "-step", step, "-dir", os.path.join(self.dir, "stack"),
             "-info", self.info_file, "-sidecar", sidecar_bin],
            self.testbed_log, env,
        )
        _wait_for(lambda: os.path.exists(self.info_file), 900, "the test stack and its sidecar",
                  self.testbed, self.testbed_log)
        with open(self.info_file) as f:
            self.info = json.load(f)
        self._sidecars_url = self.info["sidecars_url"]
        self._use(self.info["sidecar"])
        self._extra = {}

    def _use(self, sidecar):
        self.address = sidecar["address"]
        self.sidecar_log = sidecar["log"]

    def _start(self, args, log, env=None):
        out = open(log, "ab")
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env or _ENV,
                                start_new_session=True, preexec_fn=_die_with_parent)
        out.close()
        self._procs.append(proc)
        return proc

    def _sidecars(self, method, name, body=None, query=""):
        """One call of the test bed's sidecars API (test/cmd/testbed/sidecars.go)."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("%s/sidecars/%s%s" % (self._sidecars_url, name, query),
                                     data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=180) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raise StackError("%s sidecar %s: %s %s" % (method, name, e.code, e.read().decode(errors="replace")))
        return json.loads(raw) if raw else None

    def start_sidecar(self):
        """Start the shared sidecar again (after stop_sidecar); returns once
        it serves."""
        self._use(self._sidecars("POST", "sidecar", {}))

    def extra_sidecar(self, name, env):
        """The address of a second sidecar on the same stack, started on
        first use, with configuration overridden by MAGNUM_CAPI_* variables
        (e.g. short timeouts.*), so that tests needing it leave the shared
        sidecar's configuration alone."""
        if name not in self._extra:
            self._extra[name] = self._sidecars("POST", name, {"env": env})["address"]
        return self._extra[name]

    def stop_sidecar(self, sig=signal.SIGTERM):
        """Stop (or with SIGKILL, kill) the shared sidecar, as an operator or
        a crash would."""
        self._sidecars("DELETE", "sidecar", query="?signal=" + ("KILL" if sig == signal.SIGKILL else "TERM"))

    def kubectl(self, *args):
        return subprocess.run(
            ["kubectl", "--kubeconfig", self.info["kubeconfig"], *args],
            check=True, capture_output=True, text=True, env=_ENV,
        ).stdout

    def stop(self):
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self._procs):
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        if os.environ.get("MAGNUM_CAPI_KEEP_STACK"):
            print("test stack kept in", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def get():
    """The process-wide stack, started on first use."""
    global _stack
    if _stack is None:
        _stack = Stack()
        atexit.register(_stack.stop)
    return _stack
