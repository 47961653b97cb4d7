"""The shim retries what may succeed later, within the call's deadline, and
then tells the user which dependency failed and what to do."""

import unittest
from unittest import mock

from magnum.common import exception
from oslo_config import cfg

from magnum_capi._grpc import grpc
from magnum_capi import client
from magnum_capi import errors
from magnum_capi.tests.test_errors_api import _PeerError  # a status the sidecar sent

CONF = cfg.CONF
MANAGEMENT_API = "the management cluster's Kubernetes API is not answering"
LOCKED = "another operation on this cluster is in progress; retry when it has finished"


class _Stub(object):
    """Answers each call with the next outcome: an RpcError is raised,
    anything else returned."""

    def __init__(self, *outcomes):
        self.outcomes = list(outcomes)
        self.timeouts = []

    def CreateCluster(self, request, timeout, metadata):
        self.timeouts.append(timeout)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


class CallRetryTest(unittest.TestCase):

    def setUp(self):
        CONF([], project="magnum")  # the shim's options with their defaults
        self.addCleanup(CONF.reset)
        CONF.set_override("unavailable_retries", 3, group="magnum_capi")
        CONF.set_override("retry_backoff", 0.5, group="magnum_capi")
        self.addCleanup(CONF.clear_override, "unavailable_retries", group="magnum_capi")
        self.addCleanup(CONF.clear_override, "retry_backoff", group="magnum_capi")
        sleep = mock.patch.object(client.time, "sleep")
        self.sleep = sleep.start()
        self.addCleanup(sleep.stop)

    def _failure(self, stub, timeout=45.0):
        with self.assertRaises(exception.MagnumException) as raised:
            self._call(stub, timeout)
        return raised.exception

    def _call(self, stub, timeout=45.0):
        with mock.patch.object(client, "_stub", return_value=stub):
            return client.call("CreateCluster", object(), timeout,
                               [("x-openstack-request-id", "req-1")])

    def test_an_applied_answer_is_not_retried(self):
        # The change is in the management cluster: a retry that failed
        # before its own writes would answer "unchanged".
        applied = _PeerError(grpc.StatusCode.UNAVAILABLE, MANAGEMENT_API)
        applied.trailing_metadata = lambda: ((errors.APPLIED_TRAILER, "true"),)
        stub = _Stub(applied, object())
        err = self._failure(stub)
        self.assertEqual(1, len(stub.timeouts))
        self.assertEqual(errors.APPLIED, errors.outcome(err))

    def test_retried_codes_then_the_answer(self):
        for code, details in ((grpc.StatusCode.UNAVAILABLE, MANAGEMENT_API),
                              (grpc.StatusCode.ABORTED, LOCKED)):
            with self.subTest(code=code):
                self.sleep.reset_mock()
                stub = _Stub(_PeerError(code, details), _PeerError(code, details), "answer")
                self.assertEqual("answer", self._call(stub))
                self.assertEqual(3, len(stub.timeouts))
                # Backoff doubles between attempts.
                self.assertEqual([mock.call(0.5), mock.call(1.0)], self.sleep.call_args_list)

    def test_other_codes_are_not_retried(self):
        for code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION,
                     grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED):
            with self.subTest(code=code):
                stub = _Stub(_PeerError(code, "no"), "answer")
                self._failure(stub)
                self.assertEqual(1, len(stub.timeouts))

    def test_no_retry_past_the_deadline(self):
        # A backoff longer than the time left: the user gets the answer now.
        CONF.set_override("retry_backoff", 10.0, group="magnum_capi")
        stub = _Stub(_PeerError(grpc.StatusCode.UNAVAILABLE, MANAGEMENT_API), "answer")
        self._failure(stub, 5.0)
        self.assertEqual(1, len(stub.timeouts))
        self.sleep.assert_not_called()

    def test_management_api_down_names_it_and_what_to_do(self):
        stub = _Stub(*[_PeerError(grpc.StatusCode.UNAVAILABLE, MANAGEMENT_API)] * 4)
        err = self._failure(stub)
        self.assertEqual(
            "The management cluster's Kubernetes API is not answering (CreateCluster, "
            "4 attempts): retry later, and tell the cloud operator if it persists", str(err))
        self.assertNotIn("sidecar", str(err))

    def test_openstack_down_names_openstack(self):
        down = "OpenStack compute service unavailable (list flavors): HTTP 503"
        stub = _Stub(*[_PeerError(grpc.StatusCode.UNAVAILABLE, down)] * 4)
        err = self._failure(stub)
        self.assertTrue(str(err).startswith("OpenStack compute service unavailable (list flavors): HTTP 503 "
                                            "(CreateCluster, 4 attempts): retry later"), str(err))
        self.assertNotIn("sidecar", str(err))

    def test_cluster_busy_says_so_without_the_holder(self):
        stub = _Stub(*[_PeerError(grpc.StatusCode.ABORTED, LOCKED)] * 4)
        err = self._failure(stub)
        self.assertEqual("Another operation on this cluster is in progress; retry when it has "
                         "finished (CreateCluster, 4 attempts)", str(err))


class _Clock(object):
    """time.monotonic and time.sleep of a clock that moves only by sleeps."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class DefaultRetriesTest(unittest.TestCase):
    """The defaults ride out a restart of the management cluster's API
    server (killed, started again: about 15 s here) within create's
    deadline; a status call still gives up at its own."""

    def setUp(self):
        CONF([], project="magnum")
        self.addCleanup(CONF.reset)
        self.clock = _Clock()
        patch = mock.patch.multiple(client.time, monotonic=self.clock.monotonic, sleep=self.clock.sleep)
        patch.start()
        self.addCleanup(patch.stop)

    def _down_until(self, up_at):
        clock = self.clock

        class Stub(object):
            calls = 0

            def CreateCluster(self, request, timeout, metadata):
                Stub.calls += 1
                if clock.now < up_at:
                    raise _PeerError(grpc.StatusCode.UNAVAILABLE, MANAGEMENT_API)
                return "answer"

        return Stub()

    def _call(self, stub, timeout):
        with mock.patch.object(client, "_stub", return_value=stub):
            return client.call("CreateCluster", object(), timeout, [])

    def test_an_api_server_restart_is_ridden_out(self):
        stub = self._down_until(self.clock.now + 15)
        self.assertEqual("answer", self._call(stub, CONF.magnum_capi.create_call_timeout))

    def test_a_status_call_keeps_its_deadline(self):
        start = self.clock.now
        stub = self._down_until(start + 60)
        with self.assertRaises(exception.MagnumException):
            self._call(stub, CONF.magnum_capi.status_timeout)
        self.assertLessEqual(self.clock.now - start, CONF.magnum_capi.status_timeout)


class DeadlineTest(unittest.TestCase):

    def test_work_out_of_time_does_not_blame_the_sidecar(self):
        err = errors.from_rpc_error(
            _PeerError(grpc.StatusCode.DEADLINE_EXCEEDED, "context deadline exceeded"),
            "CreateCluster", 300)
        self.assertEqual("CreateCluster did not finish within 300s: retry later, and tell the "
                         "cloud operator if it persists", str(err))
