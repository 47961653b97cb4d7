package release

import (
	"context"
	"errors"
	"sync"

	helmkube "helm.sh/helm/v3/pkg/kube"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Helm 3 writes a release's objects one round trip after another: an
// upgrade reads every object (twice when it has not changed) and patches
// it before it turns to the next, an install creates them kind by kind.
// Through CAPI's conversion and validation webhooks that is most of a
// create and nearly all of a resize (docs/benchmarks.md, "Side by side with
// the peer"). The objects of one release do not depend on each other at
// write time — Cluster API's controllers reconcile references whatever the
// order — so concurrentWrites does each object's own reads and writes side
// by side, with Helm's own code for each object, and leaves everything
// else to Helm: the release record, its history, hooks, rollback, adoption
// and the three-way merge all stay Helm's.

// maxConcurrentWrites bounds the requests one action has in flight: the
// openstack-cluster chart renders about 35 objects; a larger chart waits
// its turn instead of opening hundreds of streams at once.
const maxConcurrentWrites = 32

// kubeClientWhere counts the panics in concurrentWrites' methods: Helm
// calls them from goroutines of its own, which a panic would take down
// with the process; recovered, Helm's action fails with the error.
const kubeClientWhere = "release/kubeClient"

// concurrentWrites is Helm's kube client whose Create and Update write the
// objects concurrently.
type concurrentWrites struct {
	*helmkube.Client
}

// IsReachable answers Helm's check that the API server answers (a GET of
// /version) without asking: every action reads the release's history from
// that API server, and an API server that is down fails that read, whose
// error names it. One round trip less per action.
func (concurrentWrites) IsReachable() error { return nil }

// firstWave are the kinds other objects can need at admission: a namespace
// before what goes in it, a CRD before its resources, the quota, limits,
// priority and service accounts a Pod is admitted against, and the roles a
// binding names — the API server lets an identity without "bind" create a
// RoleBinding only once it can read the role and sees it holds every rule in
// it (the least-privileged sidecar of deploy/rbac, TestLeastPrivilege). They
// are written before the rest, as Helm's install order has them.
var firstWave = map[string]bool{
	"Namespace": true, "CustomResourceDefinition": true, "PriorityClass": true,
	"ResourceQuota": true, "LimitRange": true, "ServiceAccount": true,
	"Role": true, "ClusterRole": true,
}

// waves splits the objects into those written first and the rest, each in
// the order given.
func waves(resources helmkube.ResourceList) []helmkube.ResourceList {
	var first, rest helmkube.ResourceList
	for _, info := range resources {
		if firstWave[info.Object.GetObjectKind().GroupVersionKind().Kind] {
			first = append(first, info)
		} else {
			rest = append(rest, info)
		}
	}
	var out []helmkube.ResourceList
	for _, w := range []helmkube.ResourceList{first, rest} {
		if len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// Create creates every object, the first wave before the rest, each with
// Helm's own create (conflict retries, field manager, refresh).
func (c concurrentWrites) Create(resources helmkube.ResourceList) (_ *helmkube.Result, err error) {
	defer panics.Recover(context.Background(), nil, kubeClientWhere, &err)
	if len(resources) == 0 {
		return c.Client.Create(resources) // Helm's own answer to nothing to do
	}
	for _, wave := range waves(resources) {
		_, err := eachObject(wave, func(info *resource.Info) (*helmkube.Result, error) {
			return c.Client.Create(helmkube.ResourceList{info})
		})
		if err != nil {
			return nil, err
		}
	}
	return &helmkube.Result{Created: resources}, nil
}

// Update brings each target object up to date concurrently, the first
// wave before the rest as Create does (an upgrade can add a role and its
// binding) — Helm's update of that one object against its own original,
// made with one read instead of Helm's two or three (concurrent_update.go;
// Helm's own with --force) — and then, as Helm does, only if every object was
// brought up to date, deletes the originals the target no longer has (a
// "keep" resource policy still keeps them). The result lists every object
// created, updated and deleted, whatever failed, for Helm's cleanup.
func (c concurrentWrites) Update(original, target helmkube.ResourceList, force bool) (res *helmkube.Result, err error) {
	defer panics.Recover(context.Background(), nil, kubeClientWhere, &err)
	res = &helmkube.Result{}
	for _, wave := range waves(target) {
		done, err := eachObject(wave, func(info *resource.Info) (*helmkube.Result, error) {
			o := original.Get(info)
			if !force && ownUpdate(info) {
				return c.updateObject(info, o)
			}
			var orig helmkube.ResourceList
			if o != nil {
				orig = helmkube.ResourceList{o}
			}
			return c.Client.Update(orig, helmkube.ResourceList{info}, force)
		})
		res.Created = append(res.Created, done.Created...)
		res.Updated = append(res.Updated, done.Updated...)
		if err != nil {
			return res, err
		}
	}
	gone, err := eachObject(original.Difference(target), func(info *resource.Info) (*helmkube.Result, error) {
		return c.Client.Update(helmkube.ResourceList{info}, nil, force)
	})
	res.Deleted = gone.Deleted
	return res, err
}

// eachObject runs write on every object, at most maxConcurrentWrites at a
// time, and gathers the results in the objects' order and every error.
func eachObject(list helmkube.ResourceList, write func(*resource.Info) (*helmkube.Result, error)) (*helmkube.Result, error) {
	results := make([]*helmkube.Result, len(list))
	errs := make([]error, len(list))
	slots := make(chan struct{}, maxConcurrentWrites)
	var wg sync.WaitGroup
	for i, info := range list {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = panics.Run(context.Background(), nil, "release/write", func() (err error) {
				results[i], err = write(info)
				return err
			})
		}()
	}
	wg.Wait()
	all := &helmkube.Result{}
	for _, r := range results {
		if r != nil {
			all.Created = append(all.Created, r.Created...)
			all.Updated = append(all.Updated, r.Updated...)
			all.Deleted = append(all.Deleted, r.Deleted...)
		}
	}
	return all, errors.Join(errs...)
}
