package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magnum-capi/magnum-capi/certs/certstest"
	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
	"github.com/magnum-capi/magnum-capi/server/config"
	"github.com/magnum-capi/magnum-capi/test/harness"
	"github.com/magnum-capi/magnum-capi/test/keystone"
)

// TestCloudAdminOfAnotherProject: projects are walls. A cluster created by
// the demo project's user is then resized, given and relieved of a node
// group, upgraded, CA-rotated and deleted by a cloud admin whose token is
// scoped to another project, as Magnum lets an admin do
// (cluster:update_all_projects). Its credential is due for renewal the
// whole time (an hour's lifetime renewed from 59m59s ahead). Every
// OpenStack write lands in the demo project, made as the cluster's own
// credential: the admin's project gets no server group, the admin no
// application credential, the cluster keeps the credential its own user
// made (a renewal waits for a user of the project), a credential rotation
// from the admin is refused saying who can do it, and at DELETE_COMPLETE
// nothing of the cluster is left in either project.
func TestCloudAdminOfAnotherProject(t *testing.T) {
	t.Parallel() // its own sidecar and cluster; with the other parallel tests, after the sequential ones
	sc := startSidecar(t, harness.SidecarOptions{Name: "cross-project", Configure: func(c *config.Config) {
		c.OpenStack.ApplicationCredentialLifetime = time.Hour
		c.OpenStack.ApplicationCredentialRenewBefore = time.Hour - time.Second
	}})
	c := newCluster(t, "crossproject", "v1.33.2", 1)
	c.spec.Cluster.Labels["server_group_policies"] = "anti-affinity"
	c.via = sc.Driver
	stackID := c.create(t, sc.Driver)
	c.waitFor(t, "CREATE_COMPLETE", 3*time.Minute)
	ns := projectNamespace()
	credential := authenticates(t, credentialSecret(t, ns, stackID))

	admin := cloudAdminOfAnotherProject(t)
	tenant := c.ctx
	c.ctx = admin.ctx
	walls := func(when string) {
		t.Helper()
		admin.assertUntouched(t, when)
		if got := authenticates(t, credentialSecret(t, ns, stackID)); got != credential {
			t.Errorf("%s: the cluster's credential changed (%s → %s): only a user of its project may make one", when, credential, got)
		}
		onlyCredential(t, c, credential)
	}

	call(t, "ResizeCluster", func(ctx context.Context) error {
		_, err := sc.Driver.ResizeCluster(ctx, c.resizeRequest(2))
		return err
	})
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	walls("after the admin's resize")

	extra := &pb.NodeGroup{Uuid: uuid.NewString(), Name: "extra", ClusterId: c.spec.Cluster.Uuid, ProjectId: c.spec.Cluster.ProjectId,
		Role: "worker", FlavorId: c.nodegroup("default-worker").FlavorId, ImageId: c.spec.ClusterTemplate.ImageId, NodeCount: 1,
		StackId: stackID, Status: "CREATE_IN_PROGRESS"}
	c.spec.Nodegroups = append(c.spec.Nodegroups, extra)
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	call(t, "CreateNodeGroup", func(ctx context.Context) error {
		_, err := sc.Driver.CreateNodeGroup(ctx, &pb.CreateNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: extra.Uuid})
		return err
	})
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	if g := groupsByName(stackID)[stackID+"-extra"]; g.ID == "" {
		t.Errorf("no server group for node group extra in the cluster's project: %+v", groupsByName(stackID))
	}
	walls("after the admin's create_nodegroup")

	c.nodegroup("extra").Status = "DELETE_IN_PROGRESS"
	c.spec.Cluster.Status = "UPDATE_IN_PROGRESS"
	call(t, "DeleteNodeGroup", func(ctx context.Context) error {
		_, err := sc.Driver.DeleteNodeGroup(ctx, &pb.DeleteNodeGroupRequest{Context: c.ctx, Spec: c.spec, NodegroupUuid: extra.Uuid})
		return err
	})
	if _, left := groupsByName(stackID)[stackID+"-extra"]; left {
		t.Errorf("node group extra's server group is left in the cluster's project after the admin's delete_nodegroup")
	}
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	walls("after the admin's delete_nodegroup")

	call(t, "UpgradeCluster", func(ctx context.Context) error {
		_, err := sc.Driver.UpgradeCluster(ctx, c.upgradeRequest("v1.34.1"))
		return err
	})
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	walls("after the admin's upgrade")

	rotated, _, err := certstest.Authorities("rotated-by-admin")
	if err != nil {
		t.Fatal(err)
	}
	c.certs = harness.CertificateAuthorities(rotated)
	c.setStatus("UPDATE_IN_PROGRESS")
	call(t, "RotateCACertificate", func(ctx context.Context) error {
		_, err := sc.Driver.RotateCACertificate(ctx, &pb.RotateCACertificateRequest{Context: c.ctx, Spec: c.spec, Certificates: c.certs})
		return err
	})
	c.waitFor(t, "UPDATE_COMPLETE", 3*time.Minute)
	walls("after the admin's CA rotation")

	ctx, cancel := callCtx()
	_, err = sc.Driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: c.ctx, Spec: c.spec})
	cancel()
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "only a user of the cluster's own project") {
		t.Errorf("the admin's credential rotation: %v, want FailedPrecondition saying who can rotate it", err)
	}
	walls("after the admin's refused credential rotation")

	// The project's own user still can.
	ctx, cancel = callCtx()
	_, err = sc.Driver.RotateCredential(ctx, &pb.RotateCredentialRequest{Context: tenant, Spec: c.spec})
	cancel()
	if err != nil {
		t.Fatalf("RotateCredential by the project's user: %v", err)
	}
	renewed := authenticates(t, credentialSecret(t, ns, stackID))
	onlyCredential(t, c, renewed)
	admin.assertUntouched(t, "after the user's credential rotation")

	c.remove(t, sc.Driver)
	admin.assertUntouched(t, "at DELETE_COMPLETE of the admin's delete")
}

// otherProjectAdmin is a cloud admin whose token is scoped to a project of
// its own, and the request context Magnum's conductor sends for it.
type otherProjectAdmin struct {
	user    keystone.User
	project keystone.Project
	ctx     *pb.RequestContext
}

func cloudAdminOfAnotherProject(t *testing.T) otherProjectAdmin {
	t.Helper()
	ctx := context.Background()
	sfx := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	project, err := stack.Keystone.CreateProject(ctx, "cloud-admins-"+sfx)
	if err != nil {
		t.Fatal(err)
	}
	user, err := stack.Keystone.CreateUser(ctx, "cloud-admin-"+sfx, project, "admin")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := stack.Keystone.Token(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	return otherProjectAdmin{user: user, project: project, ctx: &pb.RequestContext{
		AuthToken: tok.ID, AuthUrl: stack.Info.AuthURL, UserId: tok.UserID, ProjectId: tok.ProjectID, IsAdmin: true,
		RequestId: "req-" + uuid.NewString(),
	}}
}

// assertUntouched fails unless nothing exists in the admin's project or of
// the admin's user: no server group, no application credential, no
// namespace (so no Secret) in the management cluster.
func (a otherProjectAdmin) assertUntouched(t *testing.T, when string) {
	t.Helper()
	if groups := stack.OpenStack.ServerGroups(a.project.ID); len(groups) > 0 {
		t.Errorf("%s: the admin's project has server groups: %+v", when, groups)
	}
	if creds := userCredentials(t, a.user.ID); len(creds) > 0 {
		t.Errorf("%s: the admin has application credentials: %+v", when, creds)
	}
	var namespace corev1.Namespace
	name := helmvalues.Namespace("magnum", a.project.ID)
	if err := stack.Env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &namespace); !apierrors.IsNotFound(err) {
		t.Errorf("%s: namespace %s of the admin's project: %v, want none", when, name, err)
	}
}

// call runs one driver call with the shim's deadline and fails the test on
// an error.
func call(t *testing.T, method string, fn func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := callCtx()
	defer cancel()
	if err := fn(ctx); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}
