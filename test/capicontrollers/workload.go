package capicontrollers

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	inmemoryserver "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server"
	"sigs.k8s.io/cluster-api/util/certs"
	"sigs.k8s.io/cluster-api/util/secret"
)

// workloads are the in-memory workload clusters: one resource group (the
// cluster's API objects: nodes, static pods, kubeadm's ConfigMaps) and one
// listener (API server and etcd members, on 127.0.0.1:<port>) per Cluster,
// both named <namespace>/<name>.
//
// Cluster API's mux binds ":<port>" itself when the first API server is
// added, long after the port is published as the control plane endpoint.
// To keep another process from taking the port meanwhile, a listener on
// 127.0.0.1:<port> holds it until then.
type workloads struct {
	runtime inmemoryruntime.Manager
	mux     *inmemoryserver.WorkloadClustersMux

	mu       sync.Mutex
	ports    map[string]int32        // cluster → its listener's port
	reserved map[string]net.Listener // cluster → the placeholder holding the port
	down     map[string]bool         // cluster → its endpoint is down (a fault)
}

func newWorkloads(runtime inmemoryruntime.Manager, mux *inmemoryserver.WorkloadClustersMux) *workloads {
	return &workloads{runtime: runtime, mux: mux, ports: map[string]int32{}, reserved: map[string]net.Listener{}, down: map[string]bool{}}
}

// ensureCluster creates the cluster's resource group (with the namespaces
// every cluster has) and reserves its listener; it returns the endpoint.
// Idempotent.
func (w *workloads) ensureCluster(ctx context.Context, key string) (string, int32, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runtime.AddResourceGroup(key)
	c := w.runtime.GetResourceGroup(key).GetClient()
	for _, name := range []string{metav1.NamespaceDefault, metav1.NamespacePublic, metav1.NamespaceSystem} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/metadata.name": name}}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", 0, fmt.Errorf("creating namespace %s in workload cluster %s: %w", name, key, err)
		}
	}
	port, ok := w.ports[key]
	if !ok {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", 0, fmt.Errorf("reserving a port for workload cluster %s: %w", key, err)
		}
		port = int32(l.Addr().(*net.TCPAddr).Port)
		w.ports[key], w.reserved[key] = port, l
	}
	listener, err := w.mux.InitWorkloadClusterListenerWithPort(key, port)
	if err != nil {
		return "", 0, err
	}
	if err := w.mux.RegisterResourceGroup(key, key); err != nil {
		return "", 0, err
	}
	return listener.Host(), listener.Port(), nil
}

// client is the in-memory API of a cluster's workload cluster.
func (w *workloads) client(key string) inmemoryruntime.Client {
	return w.runtime.GetResourceGroup(key).GetClient()
}

// exists reports whether the cluster's workload cluster was created.
func (w *workloads) exists(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ports[key]
	return ok
}

// addAPIServer starts serving the cluster's API (on the first call) with a
// certificate from its CA.
func (w *workloads) addAPIServer(key, pod string, ca *x509.Certificate, caKey *rsa.PrivateKey) error {
	if w.mux.HasAPIServer(key, pod) {
		return nil
	}
	w.mu.Lock()
	if l := w.reserved[key]; l != nil {
		_ = l.Close()
		delete(w.reserved, key)
	}
	down := w.down[key]
	w.mu.Unlock()
	if err := w.mux.AddAPIServer(key, pod, ca, caKey); err != nil {
		return err
	}
	if down {
		// Behind a failed load balancer a new API server is unreachable
		// too.
		return w.mux.StopListener(key)
	}
	return nil
}

// setDown stops or restarts the cluster's endpoint (the api-server-down
// fault). Idempotent.
func (w *workloads) setDown(key string, down bool) error {
	w.mu.Lock()
	_, known := w.ports[key]
	was := w.down[key]
	if known {
		w.down[key] = down
	}
	w.mu.Unlock()
	if !known || was == down {
		return nil
	}
	info := w.mux.GetCluster(key)
	if info == nil || len(info.APIServers) == 0 {
		return nil
	}
	if down {
		return w.mux.StopListener(key)
	}
	return w.mux.StartListener(key)
}

// keys lists the workload clusters.
func (w *workloads) keys() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.ports))
	for k := range w.ports {
		out = append(out, k)
	}
	return out
}

// deleteAPIServer removes an API server; when it was the last, the mux
// closes the listener and the port is held again, as a cloud keeps a load
// balancer's address while it has no members.
func (w *workloads) deleteAPIServer(key, pod string) error {
	if !w.mux.HasAPIServer(key, pod) {
		return nil
	}
	if err := w.mux.DeleteAPIServer(key, pod); err != nil {
		return err
	}
	if info := w.mux.GetCluster(key); info != nil && len(info.APIServers) == 0 {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, held := w.reserved[key]; !held {
			if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", w.ports[key])); err == nil {
				w.reserved[key] = l
			}
		}
	}
	return nil
}

// deleteCluster removes the listener and the resource group. Idempotent.
func (w *workloads) deleteCluster(key string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if l := w.reserved[key]; l != nil {
		_ = l.Close()
	}
	delete(w.reserved, key)
	delete(w.ports, key)
	delete(w.down, key)
	if err := w.mux.DeleteWorkloadClusterListener(key); err != nil {
		return err
	}
	w.runtime.DeleteResourceGroup(key)
	return nil
}

// close releases every placeholder and stops the mux.
func (w *workloads) close(ctx context.Context) error {
	w.mu.Lock()
	for key, l := range w.reserved {
		_ = l.Close()
		delete(w.reserved, key)
	}
	w.mu.Unlock()
	// The mux closes its listeners first, then waits for open connections
	// to go idle; the controllers' watches on workload API servers never
	// do, so the wait ends at ctx's deadline. The process is exiting and
	// nothing listens any more: that is a clean stop, not an error (the
	// status benchmark, which stops the controllers with clusters up, failed
	// on it).
	if err := w.mux.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// readCA reads a cluster CA Secret (<cluster>-ca, <cluster>-etcd): the
// in-memory API server and etcd serve certificates signed by them, as
// kubeadm's would be. Cluster API's mux takes RSA keys only, which is what
// kubeadm, Cluster API and Magnum generate.
func readCA(ctx context.Context, c client.Reader, namespace, cluster string, purpose secret.Purpose) (*x509.Certificate, *rsa.PrivateKey, error) {
	s := &corev1.Secret{}
	name := secret.Name(cluster, purpose)
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		return nil, nil, fmt.Errorf("reading CA Secret %s: %w", name, err)
	}
	cert, err := certs.DecodeCertPEM(s.Data[secret.TLSCrtDataName])
	if err != nil || cert == nil {
		return nil, nil, fmt.Errorf("CA Secret %s: %s is not a PEM certificate", name, secret.TLSCrtDataName)
	}
	key, err := certs.DecodePrivateKeyPEM(s.Data[secret.TLSKeyDataName])
	if err != nil {
		return nil, nil, fmt.Errorf("CA Secret %s: %s: %w", name, secret.TLSKeyDataName, err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, nil, errors.New("CA Secret " + name + ": the in-memory API server needs an RSA key")
	}
	return cert, rsaKey, nil
}
