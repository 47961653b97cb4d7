"""Makes the shim's distribution metadata visible to Magnum without
installing it.

Magnum finds drivers through the magnum.drivers entry point, which lives in
the distribution's metadata: generate it in place (as `pip install -e`
would) and add the source directory to the working set that Magnum 15's
pkg_resources reads (importlib.metadata, used from Magnum 18, reads
sys.path directly).
"""

import os
import subprocess
import sys

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def register():
    subprocess.run(
        [sys.executable, "setup.py", "-q", "egg_info"],
        cwd=SOURCE, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    if SOURCE not in sys.path:
        sys.path.insert(0, SOURCE)
    import pkg_resources

    pkg_resources.working_set.add_entry(SOURCE)
