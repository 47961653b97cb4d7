"""Cluster API driver for OpenStack Magnum (the Python shim).

The shim is deliberately thin: every operation is one gRPC call to the
magnum-capi sidecar, and the answer is written back onto Magnum's objects.
"""
