"""The second half of `make demo`, run by `make test`: test/demo/demo.py's
own Demo case (create -> CREATE_COMPLETE -> delete -> DELETE_COMPLETE with
nothing of the cluster left at that first DELETE_COMPLETE), on the shared
test stack instead of one of its own. A demo that breaks fails the suite.
Its timeline goes to the captured output, shown when it fails."""

import importlib.util
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


def _load_demo():
    spec = importlib.util.spec_from_file_location(
        "magnum_capi_demo", os.path.join(REPO, "test", "demo", "demo.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


demo = _load_demo()


class DemoTest(demo.Demo):
    def setUp(self):
        super().setUp()
        # demo.py writes its timeline to the terminal; here pytest's
        # captured stdout keeps it for a failure's report.
        demo.OUT = sys.stdout
