"""Configuration of the shim: the [magnum_capi] group of magnum.conf."""

from oslo_config import cfg

GROUP = cfg.OptGroup(
    "magnum_capi",
    title="Cluster API driver",
    help="How Magnum reaches the magnum-capi sidecar.",
)

OPTS = [
    cfg.StrOpt(
        "sidecar_address",
        default="unix:///run/magnum-capi/magnum-capi.sock",
        help="gRPC address of the magnum-capi sidecar: unix:///path for the "
        "socket shared with the sidecar container, or host:port (mTLS "
        "required, see tls_* options).",
    ),
    cfg.FloatOpt(
        "call_timeout",
        default=45.0,
        min=1.0,
        help="Deadline in seconds for a mutating call (create, resize, "
        "upgrade, ...). upgrade_cluster is a synchronous Magnum RPC, so keep "
        "this below [DEFAULT] rpc_response_timeout (60 s).",
    ),
    cfg.FloatOpt(
        "create_call_timeout",
        default=300.0,
        min=1.0,
        help="Deadline in seconds for create_cluster's call. Magnum casts "
        "cluster creation to the conductor (no RPC timeout applies), and "
        "the sidecar installs the whole chart within the call, which takes "
        "longer when many clusters are created at once. A create that "
        "outlives its deadline is not lost: deleting the CREATE_FAILED "
        "cluster removes what it made.",
    ),
    cfg.FloatOpt(
        "status_timeout",
        default=10.0,
        min=0.5,
        help="Deadline in seconds for status and health calls.",
    ),
    cfg.IntOpt(
        "unavailable_retries",
        default=6,
        min=0,
        help="How many times a call is retried, within its deadline, when "
        "the sidecar is unavailable (restarting, socket not there yet), "
        "reports a dependency unavailable (the management cluster's API, "
        "OpenStack) or another operation on the cluster in progress, before "
        "Magnum is given an error naming what failed. With retry_backoff 0.5 "
        "the default rides out about 30 s (a restart of the sidecar or of "
        "the management cluster's API server) where the call's deadline "
        "allows; status calls stop at status_timeout.",
    ),
    cfg.FloatOpt(
        "retry_backoff",
        default=0.5,
        min=0.0,
        help="Seconds before the first retry; doubled for each further one.",
    ),
    cfg.ListOpt(
        "provides",
        default=[
            "vm:ubuntu:kubernetes",
            "vm:flatcar:kubernetes",
            "vm:debian:kubernetes",
            "vm:rocky:kubernetes",
        ],
        help="The (server_type, os, coe) tuples this driver answers for, as "
        "server_type:os:coe. Magnum picks drivers by these tuples (and, from "
        "Magnum 18, by the image property magnum_driver=magnum_capi). When "
        "another installed driver claims the same tuple, the last one loaded "
        "wins silently: give images for this driver a distinct os_distro "
        "(e.g. ubuntu-capi, flatcar-capi) and list it here, or disable the "
        "other driver in [drivers] disabled_drivers.",
    ),
    cfg.StrOpt(
        "tls_ca_file",
        help="CA bundle that signed the sidecar's certificate (TCP only).",
    ),
    cfg.StrOpt(
        "tls_cert_file",
        help="Client certificate presented to the sidecar (TCP only).",
    ),
    cfg.StrOpt(
        "tls_key_file",
        help="Key of tls_cert_file (TCP only).",
    ),
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(OPTS, group=GROUP)


def list_opts():
    """Entry point for oslo-config-generator."""
    return [(GROUP, OPTS)]


register_opts(cfg.CONF)
