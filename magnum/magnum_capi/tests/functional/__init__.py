"""Tests of the shim on Debian's real Magnum against a running sidecar on the
test stack (see stack.py)."""
