"""Dry runs for operators: the chart values a cluster would get, and what
would change against its deployed release.

    magnum-capi-preview [--config-file /etc/magnum/magnum.conf] CLUSTER
        [--template TEMPLATE] [--values]

prints the difference between the deployed release and what the cluster
would be applied with now, or after an upgrade to TEMPLATE (name or uuid);
--values prints the complete values instead. It runs where magnum-conductor
runs (it reads Magnum's database and reaches the sidecar the same way) and
changes nothing. It authenticates as Magnum's service user
([keystone_auth]); render_values() and run() take any Magnum context with a
token.
"""

import argparse
import sys

from oslo_config import cfg

from magnum_capi import client
from magnum_capi import convert
from magnum_capi import upgrade
from magnumcapi.v1 import driver_pb2

CONF = cfg.CONF


def render_values(context, cluster, cluster_template=None):
    """The sidecar's RenderValuesResponse for cluster, as it is or moved to
    cluster_template (an upgrade preview)."""
    if cluster_template is None:
        spec = convert.spec(cluster)
    else:
        spec, _ = upgrade.spec(cluster, cluster_template)
    return client.call(
        "RenderValues",
        driver_pb2.RenderValuesRequest(
            context=convert.request_context(context), spec=spec),
        CONF.magnum_capi.call_timeout,
        convert.metadata(context, cluster),
    )


def report(resp, values=False):
    """The text the command prints for one RenderValuesResponse."""
    lines = ["# chart version %s" % resp.chart_version]
    lines += ["# warning: %s" % w for w in resp.warnings]
    if values:
        lines.append(resp.values_yaml.rstrip("\n"))
    elif not resp.deployed:
        lines.append("# not deployed: every value would be new (--values "
                     "shows them)")
    elif not resp.diff:
        lines.append("# no change")
    else:
        lines.append(resp.diff.rstrip("\n"))
    return "\n".join(lines) + "\n"


def run(context, cluster_ident, template_ident=None, values=False):
    """Look the objects up as the API would and return report()'s text."""
    from magnum import objects

    cluster = _lookup(objects.Cluster, context, cluster_ident)
    template = None
    if template_ident:
        template = _lookup(objects.ClusterTemplate, context, template_ident)
    return report(render_values(context, cluster, template), values=values)


def _lookup(cls, context, ident):
    from oslo_utils import uuidutils

    if uuidutils.is_uuid_like(ident):
        return cls.get_by_uuid(context, ident)
    return cls.get_by_name(context, ident)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="magnum-capi-preview",
        description="Show the chart values a Magnum cluster would be "
        "applied with, or their difference from its deployed release. "
        "Changes nothing.")
    parser.add_argument("cluster", help="cluster name or uuid")
    parser.add_argument("--template",
                        help="preview an upgrade to this cluster template")
    parser.add_argument("--values", action="store_true",
                        help="print the complete values, not the difference")
    parser.add_argument("--config-file", action="append", default=[],
                        help="magnum.conf (default: /etc/magnum/magnum.conf)")
    args = parser.parse_args(argv)

    from magnum.common import context as magnum_context
    import magnum.conf

    from magnum_capi import conf  # noqa: F401 - registers [magnum_capi]

    magnum.conf.CONF(
        [], project="magnum",
        default_config_files=args.config_file or None)
    ctx = magnum_context.make_admin_context(all_tenants=True)
    # The sidecar resolves images, networks and volume types with the
    # caller's token; here that is Magnum's own service user
    # ([keystone_auth]), as in the periodic jobs.
    ctx.auth_token = _service_token(ctx)
    sys.stdout.write(run(ctx, args.cluster, args.template, args.values))
    return 0


def _service_token(ctx):
    from magnum.common import keystone

    return keystone.KeystoneClientV3(ctx).session.get_token()


if __name__ == "__main__":
    sys.exit(main())
