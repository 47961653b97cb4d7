"""A tiny read-only Kubernetes client for the demo's listing, using the test
bed's admin kubeconfig (client certificate) and requests."""

import base64
import os
import tempfile

import requests
import yaml

KINDS = [
    ("Cluster", "cluster.x-k8s.io/v1beta2", "clusters"),
    ("OpenStackCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "openstackclusters"),
    ("KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta2", "kubeadmcontrolplanes"),
    ("MachineDeployment", "cluster.x-k8s.io/v1beta2", "machinedeployments"),
    ("Machine", "cluster.x-k8s.io/v1beta2", "machines"),
    ("OpenStackMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta1", "openstackmachinetemplates"),
    ("KubeadmConfigTemplate", "bootstrap.cluster.x-k8s.io/v1beta2", "kubeadmconfigtemplates"),
    ("MachineHealthCheck", "cluster.x-k8s.io/v1beta2", "machinehealthchecks"),
    ("HelmRelease", "addons.stackhpc.com/v1alpha1", "helmreleases"),
    ("Manifests", "addons.stackhpc.com/v1alpha1", "manifests"),
    ("Secret", "v1", "secrets"),
]


class Client:
    def __init__(self, kubeconfig):
        with open(kubeconfig) as f:
            cfg = yaml.safe_load(f)
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        self.server = cluster["server"].rstrip("/")
        self._dir = tempfile.mkdtemp(prefix="demo-kube-")
        self.verify = self._write("ca.crt", cluster["certificate-authority-data"])
        self.cert = (self._write("tls.crt", user["client-certificate-data"]),
                     self._write("tls.key", user["client-key-data"]))

    def _write(self, name, data):
        path = os.path.join(self._dir, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def list(self, api_version, plural, namespace, selector):
        prefix = "/api/v1" if api_version == "v1" else "/apis/" + api_version
        r = requests.get(
            "%s%s/namespaces/%s/%s" % (self.server, prefix, namespace, plural),
            params={"labelSelector": selector}, cert=self.cert, verify=self.verify, timeout=10,
        )
        r.raise_for_status()
        return r.json()["items"]

    def count_objects(self, namespace, release):
        """Objects of one release by kind: the chart's and CAPI's (cluster
        label), plus the driver's Secrets (cluster-name label)."""
        counts = {}
        for kind, api_version, plural in KINDS:
            selector = "capi.stackhpc.com/cluster=%s" % release
            if kind == "Secret":
                selector = "cluster.x-k8s.io/cluster-name=%s" % release
            counts[kind] = len(self.list(api_version, plural, namespace, selector))
        return counts
