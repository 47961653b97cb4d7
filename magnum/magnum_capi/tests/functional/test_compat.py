"""Magnum 16 through master, checked without those releases installed.

Only Magnum 15 (Debian 12's python3-magnum) can run here. What later
releases changed in the driver interface and in the names the shim uses was
read from openstack/magnum's history (tags 15.0.1 to 22.0.0 and master at
5a492d64, see /work/shared/research/magnum-core.md) and is written down
below as data; these tests hold the shim to it:

- every method of the newest driver interface exists on our Driver and
  accepts the arguments Magnum's callers pass (all positional);
- the shim uses only Magnum names present in every release from 15.0.1 to
  master, except inside a try block (names later releases removed);
- grpc is imported only through magnum_capi._grpc (eventlet, see there).

A new use of a Magnum name fails test_magnum_names until it is checked
against the releases and added to IN_EVERY_RELEASE.
"""

import ast
import glob
import inspect
import os

from magnum.drivers.common import driver as magnum_driver
from magnum.tests import base as magnum_base

from magnum_capi import driver as capi_driver

SHIM = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The driver interface on master (magnum/drivers/common/driver.py): method ->
# (positional parameters after self, how many have defaults), and the
# release that added it.
NEWEST_INTERFACE = {
    "update_cluster_status": (("context", "cluster", "use_admin_ctx"), 1, 15),
    "create_cluster": (("context", "cluster", "cluster_create_timeout"), 0, 15),
    "update_cluster": (("context", "cluster", "scale_manager", "rollback"), 2, 15),
    "pre_delete_cluster": (("context", "cluster"), 0, 15),
    "upgrade_cluster": (("context", "cluster", "cluster_template", "max_batch_size",
                         "nodegroup", "scale_manager", "rollback"), 2, 15),
    "delete_cluster": (("context", "cluster"), 0, 15),
    "resize_cluster": (("context", "cluster", "resize_manager", "node_count",
                        "nodes_to_remove", "nodegroup"), 1, 15),
    "validate_master_size": (("node_count",), 0, 20),
    "validate_master_resize": (("node_count",), 0, 20),
    "create_federation": (("context", "federation"), 0, 15),
    "update_federation": (("context", "federation"), 0, 15),
    "delete_federation": (("context", "federation"), 0, 15),
    "create_nodegroup": (("context", "cluster", "nodegroup"), 0, 15),
    "update_nodegroup": (("context", "cluster", "nodegroup"), 0, 15),
    "delete_nodegroup": (("context", "cluster", "nodegroup"), 0, 15),
    "rotate_credential": (("context", "cluster"), 0, 21),
    "get_monitor": (("context", "cluster"), 0, 15),
    "get_scale_manager": (("context", "osclient", "cluster"), 0, 15),
    "rotate_ca_certificate": (("context", "cluster"), 0, 15),
}

# Magnum names present in 15.0.1, 16.0.0, 17.0.0, 18.0.0, 19.0.0, 20.0.0,
# 21.0.0, 22.0.0 and master (checked in each tag's source).
IN_EVERY_RELEASE = {
    "magnum.conf",
    "magnum.objects", "magnum.objects.Cluster", "magnum.objects.ClusterTemplate",
    "magnum.objects.NodeGroup", "magnum.objects.fields",
    "magnum.objects.fields.ClusterStatus",
    "magnum.common.cert_manager", "magnum.common.cert_manager.get_backend",
    "magnum.common.clients", "magnum.common.clients.OpenStackClients",
    "magnum.common.context", "magnum.common.context.make_admin_context",
    "magnum.common.exception", "magnum.common.exception.ClusterNotFound",
    "magnum.common.exception.InvalidParameterValue",
    "magnum.common.exception.MagnumException",
    "magnum.common.exception.NodeGroupNotFound",
    "magnum.common.exception.NotSupported",
    "magnum.common.keystone", "magnum.common.keystone.KeystoneClientV3",
    "magnum.common.x509.operations", "magnum.common.x509.operations.decrypt_key",
    "magnum.conductor.monitors", "magnum.conductor.monitors.MonitorBase",
    "magnum.conductor.handlers.common.cert_manager",
    "magnum.conductor.handlers.common.cert_manager.delete_certificates_from_cluster",
    "magnum.conductor.handlers.common.cert_manager.delete_client_files",
    "magnum.conductor.handlers.common.cert_manager.get_cluster_ca_certificate",
    "magnum.conductor.handlers.common.cert_manager.get_cluster_magnum_cert",
    "magnum.drivers.common.driver", "magnum.drivers.common.driver.Driver",
}

# Present in 15 but not in every later release: use only inside try.
NOT_IN_EVERY_RELEASE = {
    "magnum.conductor.handlers.common.trust_manager",  # gone on master
    "magnum.conductor.handlers.common.trust_manager.delete_trustee_and_trust",
}


def _shim_modules():
    for path in sorted(glob.glob(os.path.join(SHIM, "magnum_capi", "*.py"))):
        with open(path) as f:
            yield os.path.basename(path), ast.parse(f.read())


def _parents(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _in_try(node, parents):
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try):
            return True
    return False


def _magnum_uses(tree):
    """(dotted name, node) for every Magnum module, name and attribute the
    module uses."""
    aliases = {}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "magnum":
            for a in node.names:
                aliases[a.asname or a.name] = node.module + "." + a.name
                uses.append((node.module + "." + a.name, node))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "magnum":
                    uses.append((a.name, node))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases):
            uses.append((aliases[node.value.id] + "." + node.attr, node))
    return uses


class CompatTest(magnum_base.TestCase):
    def test_newest_interface_is_implemented(self):
        drv = capi_driver.Driver()  # not abstract on the installed Magnum
        self.assertIs(False, drv.beta)
        self.assertIsInstance(capi_driver.Driver.provides, property)
        for name, (params, defaults, since) in NEWEST_INTERFACE.items():
            method = getattr(drv, name, None)
            self.assertTrue(callable(method), "%s (Magnum %d) is missing" % (name, since))
            # Our own implementation, not the base class's default (which
            # raises NotSupported/NotImplementedError or does nothing).
            if name not in ("pre_delete_cluster", "get_scale_manager"):
                self.assertIsNot(getattr(magnum_driver.Driver, name, None),
                                 getattr(capi_driver.Driver, name), name)
            sig = inspect.signature(method)
            ours = [p.name for p in sig.parameters.values()
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            self.assertEqual(list(params), ours, name)
            # Callers pass the required arguments, or all, positionally
            # (master passes rollback in the scale_manager slot).
            required = len(params) - defaults
            sig.bind(*range(required))
            sig.bind(*range(len(params)))

    def test_magnum_names(self):
        for module, tree in _shim_modules():
            parents = _parents(tree)
            for name, node in _magnum_uses(tree):
                where = "%s:%d uses %s" % (module, node.lineno, name)
                if name in IN_EVERY_RELEASE:
                    continue
                self.assertIn(name, NOT_IN_EVERY_RELEASE,
                              where + ", which is not known to be in every Magnum "
                              "release from 15 to master: check and list it")
                self.assertTrue(_in_try(node, parents),
                                where + " outside a try block; later releases lack it")

    def test_names_in_every_release_exist_here(self):
        """The list above against the installed Magnum 15, by import."""
        import importlib

        for name in sorted(IN_EVERY_RELEASE | NOT_IN_EVERY_RELEASE):
            try:
                importlib.import_module(name)
                continue
            except ImportError:
                pass
            module, attr = name.rsplit(".", 1)
            self.assertTrue(hasattr(importlib.import_module(module), attr), name)

    def test_grpc_is_imported_only_through_the_eventlet_safe_module(self):
        for module, tree in _shim_modules():
            if module == "_grpc.py":
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    self.assertNotEqual("grpc", name.split(".")[0],
                                        "%s:%d imports grpc directly" % (module, node.lineno))
