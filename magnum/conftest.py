"""pytest configuration for the shim's tests.

Magnum finds drivers through the magnum.drivers entry point, so the shim's
distribution metadata must be visible: generate it in place (as `pip install
-e` would) and put this directory on the working set Magnum 15's
pkg_resources (and later releases' importlib.metadata) read.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _ensure_metadata():
    subprocess.run(
        [sys.executable, "setup.py", "-q", "egg_info"],
        cwd=HERE,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import pkg_resources

    pkg_resources.working_set.add_entry(HERE)


_ensure_metadata()
