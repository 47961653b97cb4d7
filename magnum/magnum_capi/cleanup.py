"""What Magnum 15-17 leave to the driver when a cluster is deleted.

From Magnum 18 the periodic job deletes a cluster's certificates and its
trustee once the driver reports DELETE_COMPLETE. Before that only the Heat
driver did, so on Zed, Antelope and Bobcat this driver must do it itself or
the certificates (Barbican secrets) and trustee users leak.
"""

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# First Magnum release whose periodic job cleans up after DELETE_COMPLETE.
_MAGNUM_CLEANS_UP_FROM = 18


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
    if magnum_major_version() >= _MAGNUM_CLEANS_UP_FROM:
        return
    from magnum.conductor.handlers.common import cert_manager

    try:
        cert_manager.delete_certificates_from_cluster(cluster, context=context)
    except Exception:  # noqa: BLE001 - cleanup must not block DELETE_COMPLETE
        LOG.exception("Deleting the certificates of cluster %s", cluster.uuid)
    try:
        from magnum.common import clients
        from magnum.conductor.handlers.common import trust_manager

        osc = clients.OpenStackClients(context)
        trust_manager.delete_trustee_and_trust(osc, context, cluster)
    except Exception:  # noqa: BLE001
        LOG.exception("Deleting the trustee and trust of cluster %s", cluster.uuid)
