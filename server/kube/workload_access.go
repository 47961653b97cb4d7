package kube

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// WorkloadAccess is how a workload cluster is reached with the admin
// credential Cluster API issued: its API address, the CA to trust and a
// client certificate (or, from other issuers, a bearer token).
type WorkloadAccess struct {
	Server                    string
	CAData, CertData, KeyData []byte
	BearerToken               string
	// ResourceVersion is the kubeconfig Secret's: it changes when Cluster
	// API issues a new credential (after a CA rotation, on renewal).
	ResourceVersion string
}

// kubeconfigKey is where Cluster API keeps the kubeconfig in the
// <cluster>-kubeconfig Secret.
const kubeconfigKey = "value"

// WorkloadAccess reads the <stackID>-kubeconfig Secret Cluster API writes in
// ns; (nil, nil) while it does not exist yet.
func (c *Cluster) WorkloadAccess(ctx context.Context, ns, stackID string) (*WorkloadAccess, error) {
	s, err := c.GetSecret(ctx, ns, stackID+"-kubeconfig")
	if err != nil || s == nil {
		return nil, err
	}
	acc, err := ParseKubeconfig(s.Data[kubeconfigKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", ns, s.Name, err)
	}
	acc.ResourceVersion = s.ResourceVersion
	return acc, nil
}

// ParseKubeconfig reads the current context's server and credential.
func ParseKubeconfig(data []byte) (*WorkloadAccess, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("no kubeconfig under %q", kubeconfigKey)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	acc := &WorkloadAccess{
		Server: rc.Host, CAData: rc.CAData, CertData: rc.CertData, KeyData: rc.KeyData, BearerToken: rc.BearerToken,
	}
	if acc.Server == "" || len(acc.CAData) == 0 || (len(acc.CertData) == 0 && acc.BearerToken == "") {
		return nil, fmt.Errorf("the kubeconfig lacks a server, its CA data or a credential (client certificate or token)")
	}
	return acc, nil
}
