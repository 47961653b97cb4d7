"""pytest configuration for the shim's tests: make the shim's entry point
visible to Magnum (see magnum_capi/tests/functional/metadata.py)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from magnum_capi.tests.functional import metadata  # noqa: E402

metadata.register()
