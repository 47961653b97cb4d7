package clusters

import (
	"context"
	"fmt"

	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// Projects are walls. Magnum lets a cloud admin of one project update,
// resize, upgrade, rotate the CA of or delete a cluster of any project
// (cluster:update_all_projects and friends); the request then carries the
// admin's token, scoped to the admin's project. Whatever the sidecar made
// with that token would be made in the admin's project (server groups, an
// application credential the tenant's workload cluster would then hold),
// and what it looked up would be looked up with the admin's view (another
// project's network of the same name). So an operation acts in OpenStack
// with the caller's token only when the caller is of the cluster's project;
// otherwise it acts as the cluster's own application credential, an
// identity of the cluster's project made by one of its users. The one thing
// that credential cannot do is make another credential (it is restricted),
// so a credential rotation from another project is refused
// (foreignRotationError) and a renewal waits for a user of the project.

// inProjectOf says whether the caller acts in the cluster's own project:
// it has a token scoped to it (the OpenStack adapter checks the token's
// scope against Caller.ProjectID).
func (c Caller) inProjectOf(spec Spec) bool {
	return c.AuthToken != "" && c.ProjectID != "" && c.ProjectID == spec.Cluster.ProjectID
}

// actor is the identity op acts as in OpenStack (see above): the caller's
// token in the cluster's project, else the cluster's application
// credential, read from its Secret. A cluster from another project without
// a stored credential (a create that failed before making it) has no
// identity to act as: NoProjectIdentityError.
func (s *Service) actor(ctx context.Context, caller Caller, op *operation) (openstack.Caller, error) {
	if caller.inProjectOf(op.spec) {
		return caller.identity(), nil
	}
	secret, err := op.mc.Kube.GetSecret(ctx, op.ns, credentialSecretName(op.stackID()))
	if err != nil {
		return openstack.Caller{}, err
	}
	if secret == nil || len(secret.Data[cloudsYAMLKey]) == 0 {
		return openstack.Caller{}, &NoProjectIdentityError{}
	}
	s.log.InfoContext(ctx, "the request is from another project: acting as the cluster's application credential",
		"stack_id", op.stackID(), "cluster_project", op.spec.Cluster.ProjectID, "caller_project", caller.ProjectID, "request_id", caller.RequestID)
	return openstack.Caller{
		ClusterCloudsYAML: secret.Data[cloudsYAMLKey],
		AuthURL:           caller.AuthURL,
		ProjectID:         op.spec.Cluster.ProjectID,
		RegionName:        caller.RegionName,
		RequestID:         caller.RequestID,
	}, nil
}

// NoProjectIdentityError: a request from outside the cluster's project on
// a cluster that has no application credential of its own, so nothing
// could act in its project.
type NoProjectIdentityError struct{}

func (e *NoProjectIdentityError) Error() string {
	return "the cluster has no application credential to act in its own project with, and the request comes from another project: " +
		"a user of the cluster's project must make this change (or delete the cluster)"
}

// FailedPrecondition: the cluster's state, not the request, is wrong.
func (e *NoProjectIdentityError) FailedPrecondition() bool { return true }

// foreignRotationError refuses a credential rotation requested from another
// project: Keystone makes an application credential only for the user who
// asks, in the project of that user's token.
func foreignRotationError() error {
	return preconditionf("%s", "only a user of the cluster's own project can rotate its application credential: "+
		"Keystone makes a credential for the user who asks, in that user's project, and the cluster must not hold an identity of another project; "+
		"ask a member of the cluster's project to run `openstack coe credential rotate`")
}

// errActingAs marks err as met while acting as the cluster's credential,
// so a refusal names the identity that was refused.
func errActingAs(actor openstack.Caller, err error) error {
	if err == nil || len(actor.ClusterCloudsYAML) == 0 {
		return err
	}
	return fmt.Errorf("acting in the cluster's project (the request is from another project): %w", err)
}
