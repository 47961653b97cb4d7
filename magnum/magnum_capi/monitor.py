"""Health for Magnum's periodic health sync, from the sidecar.

The sidecar reads only management-cluster objects (its watch cache); Magnum
never needs to reach the workload cluster's API.
"""

from magnum.conductor import monitors

from magnum_capi import client
from magnum_capi import convert
from magnumcapi.v1 import driver_pb2
from oslo_config import cfg

CONF = cfg.CONF


class Monitor(monitors.MonitorBase):
    def __init__(self, context, cluster):
        super().__init__(context, cluster)
        self.data = {}

    @property
    def metrics_spec(self):
        return {}

    def pull_data(self):
        """Metrics are not collected: Magnum's metrics API is deprecated."""

    def poll_health_status(self):
        resp = client.call(
            "GetClusterHealth",
            driver_pb2.GetClusterHealthRequest(spec=convert.spec(self.cluster)),
            CONF.magnum_capi.status_timeout,
            convert.metadata(self.context, self.cluster),
        )
        self.data["health_status"] = resp.health_status
        # DictOfStringsField: every value a string.
        self.data["health_status_reason"] = {
            str(k): str(v) for k, v in resp.health_status_reason.items()
        }
