"""Cluster API driver for OpenStack Magnum (the Python shim).

The shim is deliberately thin: every operation is one gRPC call to the
magnum-capi sidecar, and the answer is written back onto Magnum's objects.
"""

# grpc first, before anything else can import it: under eventlet it must be
# imported with the operating system's threading (see _grpc.py).
from magnum_capi import _grpc  # noqa: F401
