"""Base class for tests that drive Debian's real Magnum through the shim.

Each test gets Magnum's own in-memory database (DbTestCase), real Magnum
objects, Magnum's x509keypair certificate backend, a real Keystone user's
token, and the shared sidecar from stack.py. Cluster operations go through
Magnum's own conductor handlers, and status through Magnum's own periodic
job, so the shim is exercised the way magnum-conductor exercises it.
"""

import json
import re
import time
import uuid

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3
from magnum.common import context as magnum_context
from magnum.conductor.handlers import cluster_conductor
from magnum.conductor.handlers import nodegroup_conductor
from magnum import objects
from magnum.objects import fields
from magnum.service import periodic
from magnum.tests.unit.db import base as db_base
from oslo_service import loopingcall
import yaml

from magnum_capi import client
from magnum_capi import conf  # noqa: F401 - registers [magnum_capi]
from magnum_capi.tests.functional import stack as stack_mod


class FunctionalTestCase(db_base.DbTestCase):
    """A Magnum database plus the sidecar on the test stack."""

    def setUp(self):
        super().setUp()
        self.stack = stack_mod.get()
        self.info = self.stack.info
        self.config(sidecar_address=self.stack.address, group="magnum_capi")
        self.config(call_timeout=45.0, group="magnum_capi")
        self.config(cert_manager_type="x509keypair", group="certificates")
        client.reset()
        # Magnum <= 22 creates a Keystone trustee and a trust for every
        # cluster (the driver uses neither): Magnum's own trust_manager runs,
        # against the trustee domain the test stack made as an operator
        # would, and the shim deletes both on Magnum 15-17 (cleanup.py).
        # Magnum's own test base replaces the trustee domain's id with a
        # made-up one; ask the real Keystone instead.
        self.stop_global("magnum.common.keystone.KeystoneClientV3.trustee_domain_id")
        trustee = self.info["trustee_domain"]
        self.config(trustee_domain_name=trustee["domain"],
                    trustee_domain_admin_name=trustee["user"],
                    trustee_domain_admin_password=trustee["password"],
                    group="trust")
        self.config(www_authenticate_uri=self.info["auth_url"], group="keystone_authtoken")
        self.user_context = self._user_context()
        self.admin_context = magnum_context.make_admin_context(all_tenants=True)

    def _user_context(self):
        user = self.info["user"]
        auth = v3.Password(
            auth_url=self.info["auth_url"], username=user["username"],
            password=user["password"], user_domain_id="default",
            project_id=user["project_id"],
        )
        sess = ks_session.Session(auth=auth)
        self.keystone = sess
        # As keystonemiddleware gives it to magnum-api: the token's roles
        # (Magnum's trust delegates them to the trustee).
        return magnum_context.RequestContext(
            auth_token=sess.get_token(), auth_url=self.info["auth_url"],
            user_id=sess.get_user_id(), project_id=sess.get_project_id(),
            roles=sess.auth.get_access(sess).role_names,
            is_admin=False, request_id="req-" + str(uuid.uuid4()),
        )

    def service_session(self):
        """A Keystone session as the stack's service identity (admin on
        project service, as Magnum's own service user)."""
        with open(self.info["service_clouds_file"]) as f:
            cloud = yaml.safe_load(f)["clouds"][self.info["service_cloud"]]
        auth = cloud["auth"]
        return ks_session.Session(auth=v3.Password(
            auth_url=auth["auth_url"], username=auth["username"], password=auth["password"],
            project_name=auth["project_name"],
            user_domain_id=auth.get("user_domain_id", "default"),
            project_domain_id=auth.get("project_domain_id", "default"),
        ))

    # -- Magnum objects -------------------------------------------------

    def create_template(self, kube_version="v1.33.2", **kw):
        fields_ = dict(
            uuid=str(uuid.uuid4()), name="k8s-%s-%s" % (kube_version, uuid.uuid4().hex[:6]),
            project_id=self.user_context.project_id, user_id=self.user_context.user_id,
            image_id=self.info["images"][kube_version], coe="kubernetes",
            server_type="vm", cluster_distro="ubuntu", network_driver="calico",
            external_network_id=self.info["external_network_id"],
            master_flavor_id="m1.medium", flavor_id="m1.medium",
            dns_nameserver="8.8.8.8", labels={}, master_lb_enabled=True,
            floating_ip_enabled=True, public=False, tls_disabled=False,
            registry_enabled=False, hidden=False, docker_storage_driver="overlay2",
            volume_driver="cinder",
        )
        fields_.update(kw)
        template = objects.ClusterTemplate(self.user_context, **fields_)
        template.create()
        return template

    def new_cluster(self, template, name="demo", **kw):
        """A Cluster object as the API hands it to the conductor (not yet in
        the database: cluster_create creates it)."""
        fields_ = dict(
            uuid=str(uuid.uuid4()), name=name, project_id=self.user_context.project_id,
            user_id=self.user_context.user_id, cluster_template_id=template.uuid,
            master_flavor_id=template.master_flavor_id, flavor_id=template.flavor_id,
            labels=dict(template.labels), create_timeout=60, keypair=None,
            docker_volume_size=None, master_lb_enabled=True, floating_ip_enabled=True,
            fixed_network=None, fixed_subnet=None,
        )
        fields_.update(kw)
        return objects.Cluster(self.user_context, **fields_)

    # -- Magnum's own flows ---------------------------------------------

    def conductor(self):
        return cluster_conductor.Handler()

    def nodegroup_conductor(self):
        return nodegroup_conductor.Handler()

    def create(self, cluster, master_count=1, node_count=2, timeout=60):
        return self.conductor().cluster_create(
            self.user_context, cluster, master_count, node_count, timeout)

    def reload(self, cluster):
        return objects.Cluster.get_by_uuid(self.admin_context, cluster.uuid)

    def sync_status(self, cluster):
        """One tick of Magnum's periodic status sync for this cluster."""
        cluster = self.reload(cluster)
        try:
            periodic.ClusterUpdateJob(self.admin_context, cluster).update_status()
        except loopingcall.LoopingCallDone:
            pass
        return cluster

    def wait_for_status(self, cluster, want, timeout=180, interval=0.2, on_change=None):
        """Run the periodic sync until the cluster reaches want; return the
        transitions seen (status, reason, seconds). on_change(status,
        reason) is called as each transition happens."""
        start = time.monotonic()
        seen = []

        def record(status, reason):
            seen.append((status, reason, round(time.monotonic() - start, 2)))
            if on_change:
                on_change(status, reason)

        while time.monotonic() - start < timeout:
            if want == fields.ClusterStatus.DELETE_COMPLETE and self._gone(cluster):
                record(want, None)
                return seen
            c = self.sync_status(cluster)
            if not seen or seen[-1][0] != c.status:
                record(c.status, c.status_reason)
            if c.status == want:
                return seen
            if c.status.endswith("_FAILED") or (c.status.endswith("_COMPLETE") and c.status != want):
                self.fail("cluster reached %s (%s) waiting for %s; seen %s"
                          % (c.status, c.status_reason, want, seen))
            time.sleep(interval)
        self.fail("cluster still %s after %ss waiting for %s; seen %s"
                  % (seen[-1][0] if seen else "?", timeout, want, seen))

    def wait_until(self, predicate, what, timeout=180, interval=0.2):
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if predicate():
                return
            time.sleep(interval)
        self.fail("timed out after %ss waiting for %s" % (timeout, what))

    def _gone(self, cluster):
        try:
            objects.Cluster.get_by_uuid(self.admin_context, cluster.uuid)
        except Exception:  # noqa: BLE001 - ClusterNotFound once destroyed
            return True
        return False

    # -- composite steps ------------------------------------------------

    def create_ready_cluster(self, template, name, master_count=1, node_count=2):
        """A cluster created through the conductor and synced to
        CREATE_COMPLETE, reloaded from the database."""
        cluster = self.new_cluster(template, name=name)
        self.create(cluster, master_count=master_count, node_count=node_count)
        self.wait_for_status(cluster, fields.ClusterStatus.CREATE_COMPLETE)
        return self.reload(cluster)

    def delete_cluster(self, cluster):
        """Delete through the conductor and sync to DELETE_COMPLETE."""
        self.conductor().cluster_delete(self.user_context, cluster.uuid)
        self.wait_for_status(cluster, fields.ClusterStatus.DELETE_COMPLETE)

    def nodegroup(self, cluster, name):
        for ng in objects.NodeGroup.list(self.admin_context, cluster.uuid):
            if ng.name == name:
                return ng
        return None

    # -- the management cluster, as an operator would look at it ----------

    def namespace(self, cluster):
        return "magnum-" + re.sub(r"[^a-z0-9]", "", cluster.project_id.lower())

    def kube_items(self, kind, namespace, selector=None):
        args = ["get", kind, "-n", namespace, "-o", "json"]
        if selector:
            args += ["-l", selector]
        return json.loads(self.stack.kubectl(*args))["items"]

    def machines(self, cluster, nodegroup=None):
        """The cluster's Machines (not being deleted), of one node group's
        MachineDeployment or, for a master group, of the control plane."""
        selector = "cluster.x-k8s.io/cluster-name=" + cluster.stack_id
        if nodegroup is not None and nodegroup.role == "master":
            selector += ",cluster.x-k8s.io/control-plane"
        elif nodegroup is not None:
            selector += ",capi.stackhpc.com/node-group=" + nodegroup.name
        return [m for m in self.kube_items("machines", self.namespace(cluster), selector)
                if not m["metadata"].get("deletionTimestamp")]

    def release_revisions(self, cluster, stack_id=None):
        """Helm's release Secrets of the cluster: one per revision."""
        return sorted(
            int(s["metadata"]["labels"]["version"])
            for s in self.kube_items("secrets", self.namespace(cluster),
                                     "owner=helm,name=" + (stack_id or cluster.stack_id)))

    def driver_secrets(self, cluster):
        """Names of the Secrets the driver wrote for the cluster."""
        return sorted(
            s["metadata"]["name"]
            for s in self.kube_items("secrets", self.namespace(cluster),
                                     "magnum.openstack.org/cluster-uuid=" + cluster.uuid))

    def application_credentials(self):
        """Ids of the test user's application credentials in Keystone."""
        resp = self.keystone.get(
            "%s/users/%s/application_credentials"
            % (self.info["auth_url"], self.user_context.user_id))
        return sorted(c["id"] for c in resp.json()["application_credentials"])
