package clusters

import (
	"context"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/magnum-capi/magnum-capi/certs"
	"github.com/magnum-capi/magnum-capi/server/openstack"
	"github.com/magnum-capi/magnum-capi/server/release"
)

// operation is one operation on one cluster past its prologue: where the
// cluster lives and, for the operations that install the chart, what they
// will install. The prologue writes nothing, so a request that fails it
// changes nothing.
type operation struct {
	spec Spec
	mc   *ManagementCluster
	ns   string
	// actor is who the operation acts as in OpenStack (caller_project.go),
	// set by prepare (and by Delete).
	actor openstack.Caller
	// values and chart are set by prepare.
	values rendered
	chart  *chart.Chart
	// deployed is the release as read once under the Lease (deployedRelease);
	// read says it was.
	deployed *release.Release
	read     bool
	// history is shared by the release actions of the operation while it
	// holds the cluster's Lease (withLock), nil otherwise: Deploy's read
	// of the history is then answered from deployedRelease's.
	history *release.History
	// beforeWrite, when set, is what the release's first write waits for
	// (Create's credential and CA Secrets; release.Target.BeforeWrite).
	beforeWrite func() error
	// wrote, when set, hears of each release record write that succeeded
	// (release.Target.Wrote; commit_gate.go).
	wrote func()
}

// stackID is the cluster's release name.
func (op *operation) stackID() string { return op.spec.Cluster.StackID }

// at places the cluster (placement.go) and names its namespace.
func (s *Service) at(ctx context.Context, spec Spec) (*operation, error) {
	mc, err := s.place(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &operation{spec: spec, mc: mc, ns: s.namespace(spec)}, nil
}

// locate is the prologue of an operation on a cluster this driver created:
// one without a stack_id never got a release, so there is nothing to act on.
func (s *Service) locate(ctx context.Context, spec Spec) (*operation, error) {
	if spec.Cluster.StackID == "" {
		return nil, preconditionf("cluster %s has no stack_id: it was never created by this driver", spec.Cluster.UUID)
	}
	return s.at(ctx, spec)
}

// prepare is the prologue of the operations that install the chart:
// locate, choose who acts in OpenStack (actor: the caller in the cluster's
// project, else the cluster's credential), render the values (resolving
// OpenStack facts as that identity), run
// the operation's own checks (check, optional) on what was rendered, and
// load the chart version the values ask for. Invalid input fails here, in
// that order, before anything is written.
func (s *Service) prepare(ctx context.Context, caller Caller, spec Spec, check func(*operation) error) (*operation, error) {
	op, err := s.locate(ctx, spec)
	if err != nil {
		return nil, err
	}
	if op.actor, err = s.actor(ctx, caller, op); err != nil {
		return nil, err
	}
	if op.values, err = s.render(ctx, op.actor, spec); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(op); err != nil {
			return nil, err
		}
	}
	if op.chart, err = s.charts.Load(ctx, op.values.chartVersion); err != nil {
		return nil, err
	}
	return op, nil
}

// owner is who the Secrets made for the cluster belong to: their labels.
func (op *operation) owner() certs.Owner {
	c := op.spec.Cluster
	return certs.Owner{Namespace: op.ns, StackID: c.StackID, ClusterUUID: c.UUID, ProjectID: c.ProjectID, UserID: c.UserID}
}
