package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Namespace prefixes every series this package defines.
const Namespace = "magnum_capi"

// Metrics holds the sidecar's series in their own registry (not the global
// one, so tests and several sidecars in one process do not collide).
type Metrics struct {
	reg          *prometheus.Registry
	rpcDuration  *prometheus.HistogramVec
	rpcErrors    *prometheus.CounterVec
	helmDuration *prometheus.HistogramVec
	transitions  *prometheus.CounterVec
	argoCD       *prometheus.CounterVec
	credentials  *prometheus.GaugeVec
	caches       *cacheCollector
}

// New registers every series, plus the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "rpc_duration_seconds",
			Help: "Time to answer a gRPC call, by method and gRPC code.",
			// Status polls answer from memory in well under a millisecond
			// (the sub-millisecond buckets tell how far under); creates and
			// upgrades wait for Helm and Keystone for seconds.
			Buckets: []float64{.00025, .0005, .001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "code"}),
		rpcErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rpc_errors_total",
			Help: "gRPC calls that did not end OK, by method and gRPC code.",
		}, []string{"method", "code"}),
		helmDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "helm_operation_duration_seconds",
			Help:    "Time of a Helm SDK operation (install, upgrade, uninstall, get), by operation and outcome.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"operation", "outcome"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "cluster_status_transitions_total",
			Help: "Cluster status changes reported to Magnum by status polls, from the status Magnum held to the new one.",
		}, []string{"from", "to"}),
		argoCD: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "argocd_secret_writes_total",
			Help: "Writes of Argo CD cluster Secrets (the GitOps hand-off), by action (apply, delete) and outcome (success, error).",
		}, []string{"action", "outcome"}),
		credentials: newCredentialExpiry(),
		caches:      newCacheCollector(),
	}
	m.reg.MustRegister(m.rpcDuration, m.rpcErrors, m.helmDuration, m.transitions, m.argoCD, m.credentials, m.caches, panics.Total,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is where the series live (tests gather from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRPC records one gRPC call. code is the gRPC code's name ("OK",
// "InvalidArgument", ...).
func (m *Metrics) ObserveRPC(method, code string, elapsed time.Duration) {
	m.rpcDuration.WithLabelValues(method, code).Observe(elapsed.Seconds())
	if code != "OK" {
		m.rpcErrors.WithLabelValues(method, code).Inc()
	}
}

// ObserveHelm records one Helm operation.
func (m *Metrics) ObserveHelm(operation string, elapsed time.Duration, err error) {
	outcome := "success"
	if err != nil {
		outcome = "error"
	}
	m.helmDuration.WithLabelValues(operation, outcome).Observe(elapsed.Seconds())
}

// ObserveTransition records a cluster going from one Magnum status to
// another. Statuses come from requests, so anything that is not a Magnum
// status is counted as "other": a client must not be able to create series
// at will.
func (m *Metrics) ObserveTransition(from, to string) {
	if from == to {
		return
	}
	m.transitions.WithLabelValues(statusLabel(from), statusLabel(to)).Inc()
}

// ObserveArgoCD records one write of an Argo CD cluster Secret.
func (m *Metrics) ObserveArgoCD(action string, err error) {
	outcome := "success"
	if err != nil {
		outcome = "error"
	}
	m.argoCD.WithLabelValues(action, outcome).Inc()
}
