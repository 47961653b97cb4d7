#!/usr/bin/python3
"""make demo: one cluster through its whole life on real Magnum code.

Debian's python3-magnum (its own database layer, conductor handlers and
periodic status job) drives the magnum-capi shim, which calls the real
sidecar over its unix socket; the sidecar installs the openstack-cluster
chart with the Helm SDK into a real kube-apiserver, where the real Cluster API
controllers (core, kubeadm control plane and bootstrap, v1.13) build the
cluster on Cluster API's in-memory workload clusters; the OpenStack
infrastructure provider and the addon provider are the test bed's own
stand-ins. Keystone is real; Glance, Neutron, Cinder and Nova answer from
recorded API JSON.

Prints a timeline and exits 0 when the cluster reached CREATE_COMPLETE and
then DELETE_COMPLETE.
"""

import os
import sys
import time
import unittest
import warnings

# Magnum 15 on Python 3.11 is noisy (pkg_resources, SQLAlchemy 2.0 notices).
warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "magnum"))
sys.path.insert(0, HERE)

from magnum_capi.tests.functional import metadata  # noqa: E402

metadata.register()

from magnum.objects import fields  # noqa: E402

import kube  # noqa: E402
from magnum_capi.tests.functional import base  # noqa: E402
from magnum_capi.tests.functional import stack as stack_mod  # noqa: E402

OUT = sys.__stdout__
T0 = time.monotonic()


def say(msg, indent=0):
    print("[%6.1fs] %s%s" % (time.monotonic() - T0, " " * indent, msg), file=OUT, flush=True)


def detail(msg):
    print("          %s" % msg, file=OUT, flush=True)


class Demo(base.FunctionalTestCase):
    def runTest(self):
        info = self.info
        template = self.create_template("v1.33.2", name="k8s-v1.33.2")
        say("cluster template %s: image %s (kube_version v1.33.2), calico, m1.medium"
            % (template.name, template.image_id))
        cluster = self.new_cluster(template, name="demo")
        say("openstack coe cluster create demo --cluster-template %s --master-count 1 --node-count 2"
            % template.name)
        self.create(cluster, master_count=1, node_count=2)
        cluster = self.reload(cluster)
        say("conductor returned: stack_id %s, %s" % (cluster.stack_id, cluster.status))

        self.follow(cluster, fields.ClusterStatus.CREATE_COMPLETE)
        cluster = self.reload(cluster)
        detail("api_address %s  coe_version %s" % (cluster.api_address, cluster.coe_version))
        for ng in sorted(cluster.nodegroups, key=lambda n: n.role):
            detail("%-15s %-16s %d node(s) %s" % (ng.name, ng.status, ng.node_count, ", ".join(ng.node_addresses)))
        self.show_objects(cluster)
        self.assertRegex(cluster.api_address, r"^https://")

        say("openstack coe cluster delete demo")
        self.conductor().cluster_delete(self.user_context, cluster.uuid)
        self.follow(cluster, fields.ClusterStatus.DELETE_COMPLETE)
        say("DELETE_COMPLETE: Magnum removed the cluster and its node groups")
        self.show_objects(cluster, after_delete=True)

    def follow(self, cluster, want):
        """Run Magnum's periodic status job until want, printing each
        transition as it happens."""
        def show(status, reason):
            say("%s%s" % (status, "  (%s)" % reason if reason else ""))
        self.wait_for_status(cluster, want, timeout=300, on_change=show)

    def show_objects(self, cluster, after_delete=False):
        client = kube.Client(self.info["kubeconfig"])
        ns = "magnum-" + "".join(ch for ch in cluster.project_id.lower() if ch.isalnum())
        counts = client.count_objects(ns, cluster.stack_id)
        if after_delete:
            left = {k: v for k, v in counts.items() if v}
            detail("Cluster API objects left in %s: %s" % (ns, left or "none"))
            self.assertEqual({}, left)
            return
        detail("Cluster API objects in namespace %s:" % ns)
        for kind, n in counts.items():
            if n:
                detail("  %-28s %d" % (kind, n))


def main():
    say("starting the test stack (first run builds kube-apiserver and etcd: minutes)")
    st = stack_mod.get()
    say("test stack up: kube-apiserver + etcd, CAPI CRDs with conversion, the Cluster API controllers, chart repo %s, Keystone %s"
        % (st.info["chart_repository"], st.info["auth_url"]))
    say("sidecar serving on %s" % st.address)
    result = unittest.TextTestRunner(stream=open(os.devnull, "w"), verbosity=0).run(Demo())
    for _, tb in result.errors + result.failures:
        print(tb, file=sys.stderr)
        print("sidecar log: %s" % st.sidecar_log, file=sys.stderr)
    if not result.wasSuccessful():
        say("demo: FAILED")
        return 1
    say("demo: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
