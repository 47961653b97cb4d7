"""Adoption on real Magnum: a cluster the StackHPC magnum-capi-helm driver
made, switched to this driver (Magnum 15 picks the driver from the
template's server_type/os_distro/coe, so the template now names ours).

The StackHPC side is test/cmd/stackhpc-install (bin/stackhpc-install):
it installs the cluster as that driver does (its release name, namespace,
Secrets applied as field manager "magnum", application credential, values
document, the chart installed by Helm). Magnum's records are written as that
driver's create would have left them: Magnum's conductor creates the rows and
the CA certificates (the install is given those same certificates, as the
StackHPC driver reads them from cert_manager), the driver's create is what
the command does, and the status is what its status sync would have saved.

Then Magnum's own periodic status job, conductor resize and conductor delete
run through the shim and the sidecar; test/e2e/adoption_test.go covers the
same ground (and previews, node group create) at the gRPC level.
"""

import base64
import gzip
import json
import shutil
import subprocess
import tempfile

import yaml

from magnum.common.x509 import operations as x509
from magnum.conductor.handlers.common import cert_manager
from magnum.conductor import utils as conductor_utils
from magnum.drivers.common import driver as magnum_driver
from magnum.objects import fields

from magnum_capi import driver as capi_driver
from magnum_capi.tests.functional import base
from magnum_capi.tests.functional import stack as stack_mod

S = fields.ClusterStatus
SECRET_SUFFIXES = ("-ca", "-cloud-credentials", "-etcd", "-proxy", "-sa")


def _text(data):
    return data.decode() if isinstance(data, bytes) else data


def _pair(cert):
    """A certificate and its key in the clear, as the StackHPC driver's
    _ensure_certificate_secrets reads them."""
    key = x509.decrypt_key(cert.get_private_key(), cert.get_private_key_passphrase())
    return {"certificate": _text(cert.get_certificate()), "private_key": _text(key)}


def _group(api_version):
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


class AdoptionTest(base.FunctionalTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Built once per class unless `make build` made it (then
        # MAGNUM_CAPI_STACKHPC_INSTALL_BIN names it).
        cls._bindir = tempfile.mkdtemp(prefix="stackhpc-install-", dir=stack_mod._TMP)
        cls.install_bin = stack_mod._binary(
            "MAGNUM_CAPI_STACKHPC_INSTALL_BIN", "./test/cmd/stackhpc-install",
            "stackhpc-install", cls._bindir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls._bindir, ignore_errors=True)
        super().tearDownClass()

    # -- the StackHPC driver's create ---------------------------------------

    def _magnum_records(self, template, name):
        """What Magnum's conductor does around the StackHPC driver's
        create_cluster: the cluster and default node group rows, and the CA
        certificates in Magnum's cert_manager."""
        cluster = self.new_cluster(template, name=name)
        cluster.status = S.CREATE_IN_PROGRESS
        cluster.create()
        for count, is_master in ((1, True), (2, False)):
            conductor_utils._get_nodegroup_object(
                self.user_context, cluster, count, is_master=is_master).create()
        cert_manager.generate_certificates_to_cluster(cluster, context=self.user_context)
        cluster.save()
        return self.reload(cluster)

    def _authorities(self, cluster):
        ctx = self.user_context
        return {
            "ca": _pair(cert_manager.get_cluster_ca_certificate(cluster, ctx)),
            "etcd_ca": _pair(cert_manager.get_cluster_ca_certificate(
                cluster, ctx, ca_cert_type="etcd")),
            "front_proxy_ca": _pair(cert_manager.get_cluster_ca_certificate(
                cluster, ctx, ca_cert_type="front_proxy")),
            "service_account": _pair(cert_manager.get_cluster_magnum_cert(cluster, ctx)),
        }

    def _install(self, cluster, template):
        """stackhpc-install: a stackhpc.Cluster in, a stackhpc.Installed
        out."""
        request = {
            "name": cluster.name, "uuid": cluster.uuid,
            "project_id": cluster.project_id, "user_id": cluster.user_id,
            "kube_version": "v1.33.2", "image_id": template.image_id,
            "external_network_id": template.external_network_id,
            "dns_nameserver": template.dns_nameserver,
            "master_flavor": template.master_flavor_id, "master_count": 1,
            "nodegroups": [{"name": "default-worker", "flavor": template.flavor_id, "count": 2}],
            # The test stack's Cinder volume types (test/harness/populate.go).
            "volume_types": ["standard", "fast-ssd"],
            "network_driver": template.network_driver,
            "auth_url": self.info["auth_url"], "token": self.user_context.auth_token,
            "cas": self._authorities(cluster),
        }
        done = subprocess.run(
            [self.install_bin, "-kubeconfig", self.info["kubeconfig"], "-wait", "3m"],
            input=json.dumps(request), capture_output=True, text=True,
            env=stack_mod._ENV, timeout=330)
        if done.returncode != 0:
            self.fail("stackhpc-install exited %s: %s" % (done.returncode, done.stderr))
        return json.loads(done.stdout)

    def _as_stackhpc_left_it(self, cluster, stack_id):
        """The rows after create_cluster and the StackHPC driver's status
        sync: stack_id on the cluster and its node groups, CREATE_COMPLETE,
        api_address from the Cluster's control plane endpoint, coe_version
        from the control plane (node addresses it never writes)."""
        ns = self.namespace(cluster)
        capi = json.loads(self.stack.kubectl(
            "get", "clusters.cluster.x-k8s.io", stack_id, "-n", ns, "-o", "json"))
        endpoint = capi["spec"]["controlPlaneEndpoint"]
        cluster.stack_id = stack_id
        cluster.status = S.CREATE_COMPLETE
        cluster.status_reason = None
        cluster.api_address = "https://%s:%s" % (endpoint["host"], endpoint["port"])
        cluster.coe_version = "v1.33.2"
        cluster.save()
        for ng in cluster.nodegroups:
            ng.stack_id = stack_id
            ng.status = S.CREATE_COMPLETE
            ng.save()
        return self.reload(cluster)

    # -- the management cluster ---------------------------------------------

    def _secret(self, cluster, name):
        for s in self.kube_items("secrets", self.namespace(cluster)):
            if s["metadata"]["name"] == name:
                return {k: base64.b64decode(v).decode() for k, v in s["data"].items()}
        self.fail("no Secret %s" % name)

    def _release_objects(self, cluster):
        """The newest release revision's objects, live: {kind/name: object}.
        Helm keeps each revision in a Secret as base64(gzip(JSON))."""
        ns = self.namespace(cluster)
        revision = self.release_revisions(cluster)[-1]
        data = self._secret(cluster, "sh.helm.release.v1.%s.v%d" % (cluster.stack_id, revision))
        release = json.loads(gzip.decompress(base64.b64decode(data["release"])))
        rendered = [o for o in yaml.safe_load_all(release["manifest"]) if o]
        types = sorted({"%s.%s" % (o["kind"].lower(), _group(o["apiVersion"])) if _group(o["apiVersion"])
                        else o["kind"].lower() for o in rendered})
        live = {"%s/%s" % (o["kind"], o["metadata"]["name"]): o
                for o in json.loads(self.stack.kubectl(
                    "get", ",".join(types), "-n", ns, "-o", "json"))["items"]}
        out = {}
        for o in rendered:
            key = "%s/%s" % (o["kind"], o["metadata"]["name"])
            self.assertIn(key, live, "an object of the release is not on the management cluster")
            out[key] = live[key]
        return out

    def _machine_uids(self, cluster):
        return {m["metadata"]["name"]: m["metadata"]["uid"] for m in self.machines(cluster)}

    # -- the test -----------------------------------------------------------

    def test_adopt_sync_resize_delete(self):
        template = self.create_template("v1.33.2")
        cluster = self._magnum_records(template, "stackhpc-made-this")
        installed = self._install(cluster, template)
        stack_id = installed["stack_id"]
        self.assertRegex(stack_id, r"^stackhpc-made-this-[a-z2-7]{12}$")
        self.assertEqual(self.namespace(cluster), installed["namespace"])
        cluster = self._as_stackhpc_left_it(cluster, stack_id)

        # The StackHPC driver's Secrets hold Magnum's certificates: what
        # `openstack coe cluster config` signs with stays valid.
        self.assertEqual([stack_id + s for s in SECRET_SUFFIXES], self.driver_secrets(cluster))
        cas = self._authorities(cluster)
        for suffix, name in (("-ca", "ca"), ("-etcd", "etcd_ca"),
                             ("-proxy", "front_proxy_ca"), ("-sa", "service_account")):
            self.assertEqual(cas[name]["certificate"],
                             self._secret(cluster, stack_id + suffix)["tls.crt"], suffix)
        self.assertIn(installed["credential_id"], self.application_credentials())

        # -- the driver is switched: the template's tuple is ours -----------
        self.assertIsInstance(
            magnum_driver.Driver.get_driver_for_cluster(self.admin_context, cluster),
            capi_driver.Driver)

        # -- Magnum's periodic status sync reads the other driver's release --
        api_address = cluster.api_address
        self.assertEqual([1], self.release_revisions(cluster))
        cluster = self.sync_status(cluster)
        cluster = self.reload(cluster)
        self.assertEqual(S.CREATE_COMPLETE, cluster.status)
        self.assertIsNone(cluster.status_reason)
        self.assertEqual(api_address, cluster.api_address)
        self.assertRegex(cluster.api_address, r"^https://127\.0\.0\.1:[0-9]+$")
        self.assertEqual("v1.33.2", cluster.coe_version)
        for role, want in (("master", 1), ("worker", 2)):
            ng = cluster.default_ng_master if role == "master" else cluster.default_ng_worker
            self.assertEqual(S.CREATE_COMPLETE, ng.status, role)
            self.assertEqual(want, ng.node_count, role)
            # Written now: the StackHPC driver never filled them in.
            self.assertEqual(
                sorted(a["address"] for m in self.machines(cluster, ng)
                       for a in m["status"]["addresses"] if a["type"] == "InternalIP"),
                sorted(ng.node_addresses), role)
        # A status read changes nothing on the management cluster.
        self.assertEqual([1], self.release_revisions(cluster))

        # -- resize through Magnum's conductor: only the replicas change ----
        before = self._release_objects(cluster)
        machines = self._machine_uids(cluster)
        worker = cluster.default_ng_worker
        self.conductor().cluster_resize(self.user_context, cluster, 3, [], worker)
        cluster = self.reload(cluster)
        self.assertEqual(S.UPDATE_IN_PROGRESS, cluster.status)
        self.assertEqual(S.UPDATE_IN_PROGRESS, self.nodegroup(cluster, "default-worker").status)
        self.wait_for_status(cluster, S.UPDATE_COMPLETE)
        cluster = self.reload(cluster)
        self.assertIsNone(cluster.status_reason)
        worker = self.nodegroup(cluster, "default-worker")
        self.assertEqual(S.UPDATE_COMPLETE, worker.status)
        self.assertEqual(3, worker.node_count)
        self.assertEqual(3, len(worker.node_addresses))
        self.assertEqual(S.CREATE_COMPLETE, cluster.default_ng_master.status)
        self.assertEqual([1, 2], self.release_revisions(cluster))

        after = self._release_objects(cluster)
        self.assertEqual(sorted(before), sorted(after), "objects added to or removed from the release")
        md = "MachineDeployment/%s-default-worker" % stack_id
        for key, b in before.items():
            a = after[key]
            self.assertEqual(b["metadata"]["uid"], a["metadata"]["uid"], key + " was replaced")
            if key != md:
                self.assertEqual(b["metadata"].get("generation"), a["metadata"].get("generation"),
                                 key + ": its spec changed")
        self.assertIn("Cluster/" + stack_id, before)
        self.assertIn("KubeadmControlPlane/%s-control-plane" % stack_id, before)
        self.assertEqual(2, before[md]["spec"]["replicas"])
        self.assertEqual(3, after[md]["spec"]["replicas"])
        self.assertGreater(after[md]["metadata"]["generation"], before[md]["metadata"]["generation"])
        self.assertEqual({k: v for k, v in before[md]["spec"].items() if k != "replicas"},
                         {k: v for k, v in after[md]["spec"].items() if k != "replicas"},
                         "the MachineDeployment changed beyond its replicas")
        # The values the StackHPC driver wrote are kept, and marked so.
        self.assertEqual("adopted", after["Cluster/" + stack_id]["metadata"]
                         .get("annotations", {}).get("magnum-capi/values"))
        # No machine replaced; one new worker.
        now = self._machine_uids(cluster)
        for name, uid in machines.items():
            self.assertEqual(uid, now.get(name), "machine %s removed or replaced" % name)
        self.assertEqual(1, len([m for m in self.machines(cluster, worker)
                                 if m["metadata"]["name"] not in machines]))

        # -- delete through Magnum's conductor: the StackHPC driver's
        # Secrets and application credential go too ------------------------
        self.delete_cluster(cluster)
        self.assertEqual([], self.driver_secrets(cluster))
        self.assertEqual([], self.release_revisions(cluster, stack_id))
        self.assertNotIn(installed["credential_id"], self.application_credentials())
        self.assertFalse([c for c in self.kube_items("clusters.cluster.x-k8s.io", self.namespace(cluster))
                          if c["metadata"]["name"] == stack_id])
