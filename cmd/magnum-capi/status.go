package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/magnum-capi/magnum-capi/capistatus"
)

const statusUsage = `usage: magnum-capi status --from-dir DIR --magnum-status STATUS [flags]
       magnum-capi status --cluster STACK_ID --namespace NS [--kubeconfig K --context C] --magnum-status STATUS [flags]

Prints, as JSON, what the driver would tell Magnum about one cluster, derived
from its objects in the management cluster: status, status_reason (what it is
waiting for, or why it failed), api_address, coe_version, health and every node
group. It answers "why is my cluster stuck".

DIR holds the objects as kubectl writes them (YAML or JSON, one object, several
documents, or a List), for example:

  kubectl -n NS get clusters,openstackclusters,kubeadmcontrolplanes,\
machinedeployments,machines,helmreleases,manifests -o yaml > DIR/objects.yaml
  kubectl -n NS get openstackservers -l cluster.x-k8s.io/cluster-name=STACK_ID \
-o yaml > DIR/servers.yaml

Add the Helm release Secrets (kubectl -n NS get secrets -l owner=helm -o yaml)
to tell whether the release is still installed; without them the release counts
as installed while the Cluster exists and is not being deleted.

With --cluster, the objects are read once from the management cluster instead
(the kinds and labels the sidecar watches, Helm's release Secrets as metadata
only), with the kubeconfig's credentials.

Flags:
`

// statusFlags are the command's flags, parsed.
type statusFlags struct {
	fromDir, magnumStatus, stackID, createdAt, nowFlag, nodeGroupsFile, release string
	timeoutMinutes                                                              int
	live                                                                        liveFlags
}

func runStatus(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f statusFlags
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, statusUsage); fs.PrintDefaults() }
	fs.StringVar(&f.fromDir, "from-dir", "", "directory of the cluster's objects (searched recursively for *.yaml, *.yml, *.json)")
	fs.StringVar(&f.magnumStatus, "magnum-status", "", "the cluster's status in Magnum, e.g. CREATE_IN_PROGRESS (required)")
	fs.StringVar(&f.stackID, "stack-id", "", "the cluster's stack_id (Helm release and CAPI Cluster name); default: the only Cluster in DIR")
	fs.StringVar(&f.createdAt, "created-at", "", "RFC 3339 time the operation started: created_at for CREATE_*, the last apply for UPDATE_*, the deletion for DELETE_*; without it nothing times out")
	fs.IntVar(&f.timeoutMinutes, "timeout-minutes", 0, "the operation's timeout (create_timeout for CREATE_*); default: the driver's defaults")
	fs.StringVar(&f.nodeGroupsFile, "nodegroups", "", "JSON list of Magnum node groups (openstack coe nodegroup list -f json); default: the control plane and one per MachineDeployment, all in --magnum-status")
	fs.StringVar(&f.release, "release-installed", "auto", "whether the Helm release is installed: true, false or auto (from Helm's release Secrets in DIR, else the Cluster)")
	fs.StringVar(&f.nowFlag, "now", "", "RFC 3339 time to evaluate at (default: now), to reproduce an earlier answer")
	f.live.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		return statusFail(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	out, err := statusFromFlags(ctx, f)
	var ioErr *statusIOError
	if errors.As(err, &ioErr) {
		fmt.Fprintf(stderr, "magnum-capi status: %v\n", err)
		return 1
	}
	if err != nil {
		return statusFail(stderr, err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "magnum-capi status: writing the result: %v\n", err)
		return 1
	}
	return 0
}

// statusFail reports input the command cannot use; exit code 2.
func statusFail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "magnum-capi status: %v\n", err)
	return 2
}

// statusIOError is a failure to read the management cluster in live mode:
// not the caller's input, so exit code 1.
type statusIOError struct{ err error }

func (e *statusIOError) Error() string { return e.err.Error() }
func (e *statusIOError) Unwrap() error { return e.err }

// statusFromFlags reads the objects, builds Magnum's side from the flags and
// derives the answer.
func statusFromFlags(ctx context.Context, f statusFlags) (statusOutput, error) {
	if !capistatus.IsKnownStatus(f.magnumStatus) {
		return statusOutput{}, fmt.Errorf("--magnum-status: %q, expected one of %s", f.magnumStatus, strings.Join(capistatus.KnownStatuses, ", "))
	}
	now := time.Now().UTC()
	if f.nowFlag != "" {
		t, err := time.Parse(time.RFC3339, f.nowFlag)
		if err != nil {
			return statusOutput{}, fmt.Errorf("--now: %q, expected an RFC 3339 time such as 2026-07-01T12:00:00Z", f.nowFlag)
		}
		now = t
	}
	var started time.Time
	if f.createdAt != "" {
		t, err := time.Parse(time.RFC3339, f.createdAt)
		if err != nil {
			return statusOutput{}, fmt.Errorf("--created-at: %q, expected an RFC 3339 time such as 2026-07-01T11:00:00Z", f.createdAt)
		}
		started = t
	}
	if f.timeoutMinutes < 0 {
		return statusOutput{}, fmt.Errorf("--timeout-minutes: %d, expected 0 or more", f.timeoutMinutes)
	}
	set, stackID, err := statusObjects(ctx, f)
	if err != nil {
		return statusOutput{}, err
	}
	snap, err := capistatus.SnapshotFromObjects(stackID, set.objs)
	if problems := append(set.problems, set.locate(err)...); len(problems) > 0 {
		return statusOutput{}, fmt.Errorf("invalid objects:\n%w", errors.Join(problems...))
	}
	objs := set.objs
	installed, err := releaseInstalled(f.release, stackID, objs, snap)
	if err != nil {
		return statusOutput{}, err
	}
	nodeGroups, err := statusNodeGroups(f.nodeGroupsFile, f.magnumStatus, stackID, snap)
	if err != nil {
		return statusOutput{}, err
	}
	req := capistatus.Request{
		Status: f.magnumStatus, StackID: stackID, OperationStarted: started,
		ReleaseExists: installed, NodeGroups: nodeGroups, Now: now,
	}
	cfg := capistatus.DefaultConfig()
	if f.timeoutMinutes > 0 {
		d := time.Duration(f.timeoutMinutes) * time.Minute
		switch strings.SplitN(f.magnumStatus, "_", 2)[0] {
		case "CREATE":
			req.CreateTimeout = d
		case "DELETE":
			cfg.DeleteTimeout = d
		default:
			cfg.UpdateTimeout = d
		}
	}
	return newStatusOutput(capistatus.Derive(req, snap, cfg), capistatus.DeriveHealth(req, snap)), nil
}

// statusObjects reads the objects from DIR, or from the management cluster in
// live mode, and settles the stack ID.
func statusObjects(ctx context.Context, f statusFlags) (objectSet, string, error) {
	if f.live.requested() {
		if f.fromDir != "" {
			return objectSet{}, "", errors.New("--from-dir and --cluster are exclusive: read the objects from files or from the management cluster")
		}
		if f.stackID != "" && f.stackID != f.live.cluster {
			return objectSet{}, "", fmt.Errorf("--stack-id %q and --cluster %q differ; --cluster is the stack_id", f.stackID, f.live.cluster)
		}
		objs, err := f.live.read(ctx)
		return objectSet{objs: objs}, f.live.cluster, err
	}
	if f.fromDir == "" {
		return objectSet{}, "", errors.New("--from-dir is required (or --cluster with --namespace to read the management cluster)")
	}
	set, err := readObjectDir(f.fromDir)
	if err != nil {
		return set, "", err
	}
	stackID := f.stackID
	if stackID == "" {
		if stackID, err = onlyCluster(set.objs); err != nil {
			if len(set.problems) > 0 {
				// The Cluster may be in a file that did not decode.
				return set, "", fmt.Errorf("invalid objects:\n%w", errors.Join(set.problems...))
			}
			return set, "", err
		}
	}
	return set, stackID, nil
}

// locate splits SnapshotFromObjects' error into one error per object, each
// prefixed with the file the object came from.
func (s objectSet) locate(err error) []error {
	if err == nil {
		return nil
	}
	var parts []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts = joined.Unwrap()
	} else {
		parts = []error{err}
	}
	for i, e := range parts {
		var oe *capistatus.ObjectError
		if errors.As(e, &oe) {
			if file, ok := s.source[objectKey(oe.Kind, oe.Namespace, oe.Name)]; ok {
				parts[i] = fmt.Errorf("%s: %w", file, e)
			}
		}
	}
	return parts
}

// onlyCluster is the name of the single CAPI Cluster among objs.
func onlyCluster(objs []*unstructured.Unstructured) (string, error) {
	var names []string
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); gvk.Group == "cluster.x-k8s.io" && gvk.Kind == "Cluster" {
			names = append(names, o.GetName())
		}
	}
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", errors.New("no Cluster (cluster.x-k8s.io) among the objects; give --stack-id (a deleted cluster has none)")
	}
	return "", fmt.Errorf("%d Clusters among the objects (%s); give --stack-id", len(names), strings.Join(names, ", "))
}

// statusOutput is the command's JSON, with the field names of Magnum's API.
type statusOutput struct {
	Status             string            `json:"status"`
	StatusReason       string            `json:"status_reason"`
	APIAddress         string            `json:"api_address"`
	COEVersion         string            `json:"coe_version"`
	HealthStatus       string            `json:"health_status"`
	HealthStatusReason map[string]string `json:"health_status_reason"`
	NodeGroups         []nodeGroupOutput `json:"nodegroups"`
}

type nodeGroupOutput struct {
	Name          string   `json:"name"`
	Status        string   `json:"status"`
	StatusReason  string   `json:"status_reason"`
	NodeCount     int      `json:"node_count"`
	NodeAddresses []string `json:"node_addresses"`
}

func newStatusOutput(r capistatus.Result, h capistatus.Health) statusOutput {
	out := statusOutput{
		Status: r.Status, StatusReason: r.StatusReason, APIAddress: r.APIAddress, COEVersion: r.COEVersion,
		HealthStatus: h.Status, HealthStatusReason: h.Reasons, NodeGroups: []nodeGroupOutput{},
	}
	for _, ng := range r.NodeGroups {
		addrs := ng.NodeAddresses
		if addrs == nil {
			addrs = []string{}
		}
		out.NodeGroups = append(out.NodeGroups, nodeGroupOutput{Name: ng.Name, Status: ng.Status, StatusReason: ng.StatusReason,
			NodeCount: ng.NodeCount, NodeAddresses: addrs})
	}
	return out
}
