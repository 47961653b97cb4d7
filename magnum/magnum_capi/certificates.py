"""Reads the CA material Magnum generated for a cluster.

Magnum stores each CA with its private key encrypted under a passphrase
(Barbican, x509keypair or local backend); the sidecar needs the keys in the
clear to write Cluster API's certificate Secrets, and it never touches
Magnum's database or key store itself.
"""

from magnum.common.x509 import operations as x509
from magnum.conductor.handlers.common import cert_manager
from oslo_log import log as logging

from magnumcapi.v1 import magnum_pb2

LOG = logging.getLogger(__name__)

# The cluster's references to its certificates in Magnum's store (Barbican,
# x509keypair or local): the three CAs and Magnum's client certificate.
REFERENCES = ("ca_cert_ref", "etcd_ca_cert_ref", "front_proxy_ca_cert_ref",
              "magnum_cert_ref")


def _pair(cert):
    key = x509.decrypt_key(
        cert.get_private_key(), cert.get_private_key_passphrase()
    )
    pem = cert.get_certificate()
    return magnum_pb2.KeyPair(
        certificate=pem.decode() if isinstance(pem, bytes) else pem,
        private_key=key.decode() if isinstance(key, bytes) else key,
    )


def authorities(cluster, context):
    msg = magnum_pb2.CertificateAuthorities()
    msg.ca.CopyFrom(
        _pair(cert_manager.get_cluster_ca_certificate(cluster, context=context))
    )
    msg.etcd_ca.CopyFrom(
        _pair(
            cert_manager.get_cluster_ca_certificate(
                cluster, context=context, ca_cert_type="etcd"
            )
        )
    )
    msg.front_proxy_ca.CopyFrom(
        _pair(
            cert_manager.get_cluster_ca_certificate(
                cluster, context=context, ca_cert_type="front_proxy"
            )
        )
    )
    msg.service_account.CopyFrom(
        _pair(cert_manager.get_cluster_magnum_cert(cluster, context=context))
    )
    return msg


def references(cluster):
    """The cluster object's certificate references, by field name."""
    return {name: getattr(cluster, name, None) for name in REFERENCES}


def stored_references(context, cluster):
    """The references as the database has them: during a CA rotation the
    conductor has put new ones on the object it hands the driver, not yet
    saved."""
    from magnum import objects

    return references(objects.Cluster.get_by_uuid(context, cluster.uuid))


def delete(context, cluster, refs):
    """Delete certificates from Magnum's store, best effort: a failure is
    logged (the cluster no longer uses them) and never fails the caller."""
    from magnum.common import cert_manager as store

    backend = store.get_backend().CertManager
    for name, ref in sorted(refs.items()):
        if not ref:
            continue
        try:
            backend.delete_cert(ref, resource_ref=cluster.uuid, context=context)
        except Exception:  # noqa: BLE001
            LOG.exception("Deleting %s %s of cluster %s", name, ref, cluster.uuid)
