"""Reads the CA material Magnum generated for a cluster.

Magnum stores each CA with its private key encrypted under a passphrase
(Barbican, x509keypair or local backend); the sidecar needs the keys in the
clear to write Cluster API's certificate Secrets, and it never touches
Magnum's database or key store itself.
"""

from magnum.common.x509 import operations as x509
from magnum.conductor.handlers.common import cert_manager

from magnumcapi.v1 import magnum_pb2


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
