"""What Magnum leaves to the driver when a cluster is deleted.

From Magnum 18 the periodic job deletes a cluster's CA and client
certificates (ca_cert_ref, magnum_cert_ref) and its trustee once the driver
reports DELETE_COMPLETE. Before that only the Heat driver did, so on Zed,
Antelope and Bobcat this driver must do it itself or the certificates
(Barbican secrets or x509keypair rows) and trustee users leak.

No Magnum release deletes the etcd and front-proxy CAs
(cert_manager.delete_certificates_from_cluster knows only the first two), nor
the client-file cache under [cluster] temp_cache_dir: this driver deletes
them on every release.

Everything here is best effort: a failure is logged and never keeps the
cluster from DELETE_COMPLETE (the Cluster API resources are already gone).
"""

from oslo_log import log as logging

from magnum_capi import certificates

LOG = logging.getLogger(__name__)

# First Magnum release whose periodic job cleans up after DELETE_COMPLETE.
MAGNUM_CLEANS_UP_FROM = 18

# Certificate references Magnum itself never deletes.
_ALWAYS_OURS = ("etcd_ca_cert_ref", "front_proxy_ca_cert_ref")


def magnum_major_version():
    try:
        from importlib import metadata

        version = metadata.version("magnum")
    except Exception:  # noqa: BLE001 - unknown means "assume old", the safe side
        try:
            import pkg_resources

            version = pkg_resources.get_distribution("magnum").version
        except Exception:  # noqa: BLE001
            return 0
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0


def after_delete_complete(context, cluster):
    from magnum.conductor.handlers.common import cert_manager

    certificates.delete(context, cluster,
                        {n: getattr(cluster, n, None) for n in _ALWAYS_OURS})
    try:
        cert_manager.delete_client_files(cluster, context=context)
    except Exception:  # noqa: BLE001
        LOG.exception("Deleting the client files of cluster %s", cluster.uuid)
    if magnum_major_version() >= MAGNUM_CLEANS_UP_FROM:
        return
    try:
        cert_manager.delete_certificates_from_cluster(cluster, context=context)
    except Exception:  # noqa: BLE001
        LOG.exception("Deleting the certificates of cluster %s", cluster.uuid)
    try:
        # Magnum <= 22 only (removed on master together with trusts); this
        # branch runs on 15-17 alone.
        from magnum.common import clients
        from magnum.conductor.handlers.common import trust_manager

        osc = clients.OpenStackClients(context)
        trust_manager.delete_trustee_and_trust(osc, context, cluster)
    except Exception:  # noqa: BLE001
        LOG.exception("Deleting the trustee and trust of cluster %s", cluster.uuid)
