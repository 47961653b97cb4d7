package testbed

import "fmt"

// StopAPIServer stops kube-apiserver and leaves etcd, the conversion webhook
// and the certificates in place, so tests can see how clients ride out an
// API server outage. Every request fails (connection refused) until
// StartAPIServer.
func (e *Env) StopAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same
// port, etcd and certificates (Start gave it a directory of its own), and
// returns once it answers /healthz. Everything stored survives; existing
// clients reconnect on their own.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}
