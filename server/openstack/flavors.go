package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// flavorMinimums reject flavors too small for a Kubernetes node; zero means
// no minimum.
type flavorMinimums struct{ ramMiB, vcpus int }

// flavorRef is one flavor reference and the field it came from.
type flavorRef struct{ field, value string }

// checkFlavors checks that every flavor the cluster will boot exists for
// the caller (by id or name) and meets the minimums, and returns them with
// their extra specs, by reference (what the values' capacity annotations are
// made from). Node groups carry their flavor; without node groups the
// cluster's and then the template's fields are used. Each distinct flavor is
// looked up once.
func checkFlavors(ctx context.Context, nova *gophercloud.ServiceClient, objs Objects, min flavorMinimums) (map[string]helmvalues.Flavor, error) {
	var errs []error
	checked := map[string]error{}
	found := map[string]helmvalues.Flavor{}
	for _, ref := range flavorRefs(objs) {
		err, done := checked[ref.value]
		if !done {
			var fl helmvalues.Flavor
			fl, err = checkFlavor(ctx, nova, ref.value, min)
			checked[ref.value] = err
			if err == nil {
				found[ref.value] = fl
			}
		}
		var problem *flavorProblem
		switch {
		case errors.As(err, &problem):
			errs = append(errs, &ReferenceError{Field: ref.field, Value: ref.value, Problem: problem.text})
		case err != nil && !done:
			errs = append(errs, err) // an outage: reported once
		}
	}
	return found, errors.Join(errs...)
}

func flavorRefs(objs Objects) []flavorRef {
	var refs []flavorRef
	for _, ng := range objs.NodeGroups {
		if ng.FlavorID != "" {
			refs = append(refs, flavorRef{fmt.Sprintf("nodegroups[%s].flavor_id", ng.Name), ng.FlavorID})
		}
	}
	if len(objs.NodeGroups) > 0 {
		return refs
	}
	for _, r := range []struct{ name, cluster, template string }{
		{"master_flavor_id", objs.Cluster.MasterFlavorID, objs.Template.MasterFlavorID},
		{"flavor_id", objs.Cluster.FlavorID, objs.Template.FlavorID},
	} {
		if field, value := clusterOrTemplate(r.name, r.cluster, r.template); value != "" {
			refs = append(refs, flavorRef{field, value})
		}
	}
	return refs
}

// flavorProblem is a reason to refuse a flavor (the reference's fault),
// as opposed to an error asking Nova.
type flavorProblem struct{ text string }

func (p *flavorProblem) Error() string { return p.text }

func checkFlavor(ctx context.Context, nova *gophercloud.ServiceClient, ref string, min flavorMinimums) (helmvalues.Flavor, error) {
	fl, err := findFlavor(ctx, nova, ref)
	if err != nil {
		return helmvalues.Flavor{}, err
	}
	if min.ramMiB > 0 && fl.RAM < min.ramMiB {
		return helmvalues.Flavor{}, &flavorProblem{fmt.Sprintf("flavor %s has %d MiB of RAM, at least %d MiB are needed", fl.Name, fl.RAM, min.ramMiB)}
	}
	if min.vcpus > 0 && fl.VCPUs < min.vcpus {
		return helmvalues.Flavor{}, &flavorProblem{fmt.Sprintf("flavor %s has %d vCPUs, at least %d are needed", fl.Name, fl.VCPUs, min.vcpus)}
	}
	specs, err := flavorExtraSpecs(ctx, nova, fl.ID)
	if err != nil {
		return helmvalues.Flavor{}, err
	}
	return helmvalues.Flavor{ID: fl.ID, Name: fl.Name, VCPUs: fl.VCPUs, RAMMiB: fl.RAM, DiskGiB: fl.Disk, ExtraSpecs: specs}, nil
}

// flavorExtraSpecs reads a flavor's extra specs (GET
// /flavors/{id}/os-extra_specs: Nova shows them in the flavor itself only
// from microversion 2.61). A cloud whose policy hides them from the caller
// answers 403: the flavor then counts as having none (no GPUs).
func flavorExtraSpecs(ctx context.Context, nova *gophercloud.ServiceClient, id string) (map[string]string, error) {
	specs, err := flavors.ListExtraSpecs(ctx, nova, id).Extract()
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		return nil, nil
	case err != nil:
		return nil, apiError(ctx, "compute", "get the extra specs of flavor "+id, callerToken, err)
	}
	return specs, nil
}

// findFlavor tries the reference as a flavor id (Nova's ids are free-form:
// "3", "m1.small" or a UUID), then as a name in the caller's flavor list.
func findFlavor(ctx context.Context, nova *gophercloud.ServiceClient, ref string) (*flavors.Flavor, error) {
	fl, err := flavors.Get(ctx, nova, ref).Extract()
	if err == nil {
		return fl, nil
	}
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return nil, apiError(ctx, "compute", "get flavor "+ref, callerToken, err)
	}
	all, err := listAll(ctx, flavors.ListDetail(nova, nil), "compute", "flavor", "", flavors.ExtractFlavors)
	if err != nil {
		return nil, err
	}
	var found []flavors.Flavor
	for _, f := range all {
		if f.Name == ref {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return nil, &flavorProblem{"no flavor with this id or name is available to the project"}
	case 1:
		return &found[0], nil
	}
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = f.ID
	}
	return nil, &flavorProblem{fmt.Sprintf("%d flavors have this name (%s); use the id", len(found), strings.Join(ids, ", "))}
}
