package capistatus

import (
	"net"
	"strconv"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// apiServerPort is CAPO's default API server port, used when an endpoint has
// a host but no port.
const apiServerPort = 6443

// apiAddress is the URL Magnum stores in api_address and `openstack coe
// cluster config` writes into kubeconfigs: from the Cluster's
// controlPlaneEndpoint, else the OpenStackCluster's (CAPO fills it first, CAPI
// copies it), else Magnum's current value, so a cache miss never erases it.
func apiAddress(req Request, snap Snapshot) string {
	if c := snap.Cluster; c != nil {
		if u := endpointURL(c.Spec.ControlPlaneEndpoint); u != "" {
			return u
		}
	}
	if o := snap.InfraCluster; o != nil && o.Spec.ControlPlaneEndpoint != nil {
		if u := endpointURL(*o.Spec.ControlPlaneEndpoint); u != "" {
			return u
		}
	}
	return req.CurrentAPIAddress
}

func endpointURL(e clusterv1.APIEndpoint) string {
	if e.Host == "" {
		return ""
	}
	port := int(e.Port)
	if port <= 0 || port > 65535 {
		port = apiServerPort
	}
	return "https://" + net.JoinHostPort(e.Host, strconv.Itoa(port))
}

// coeVersion is the control plane's Kubernetes version as Magnum shows it
// (with the "v"): the KubeadmControlPlane's status.version, the oldest version
// its machines run, so an upgrade shows once it is done; before any machine
// reports, spec.version; without a KubeadmControlPlane, Magnum's current value.
func coeVersion(req Request, snap Snapshot) string {
	if kcp := snap.ControlPlane; kcp != nil {
		if kcp.Status.Version != "" {
			return kcp.Status.Version
		}
		if kcp.Spec.Version != "" {
			return kcp.Spec.Version
		}
	}
	return req.CurrentCOEVersion
}
