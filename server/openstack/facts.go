package openstack

import (
	"context"
	"errors"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"

	"github.com/magnum-capi/magnum-capi/helmvalues"

	"github.com/magnum-capi/magnum-capi/server/panics"
)

// Facts resolves what the values need from OpenStack, as the caller: the
// template's image (kube_version, os_distro) and the worker node groups' own
// images where they differ from it, the external network, the
// fixed network and subnet, the Cinder volume types, and (unless turned off)
// the node groups' flavors, which must exist (their capacity goes into the
// autoscaler's annotations). The look-ups run concurrently; every
// bad reference is reported at once, each a ReferenceError naming its field.
func (a *Adapter) Facts(ctx context.Context, caller Caller, objs Objects) (Facts, error) {
	sess, err := a.callerSession(ctx, caller)
	if err != nil {
		return Facts{}, err
	}
	eo := a.endpointOpts(caller)
	// Each look-up writes only its own result; errors are collected.
	var (
		image       helmvalues.Image
		groupImages map[string]helmvalues.Image
		nets        networkFacts
		volumeTypes []helmvalues.VolumeType
		found       map[string]helmvalues.Flavor
		mu          sync.Mutex
		errs        []error
		wg          sync.WaitGroup
	)
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := panics.Run(ctx, nil, "openstack/facts", f); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	run(func() error {
		glance, err := a.serviceFor(ctx, "image", func() (*gophercloud.ServiceClient, error) { return openstack.NewImageV2(sess.pc, eo) })
		if err != nil {
			return err
		}
		image, groupImages, err = findImages(ctx, glance, objs)
		return err
	})
	run(func() error {
		neutron, err := a.serviceFor(ctx, "network", func() (*gophercloud.ServiceClient, error) { return openstack.NewNetworkV2(sess.pc, eo) })
		if err != nil {
			return err
		}
		nets, err = resolveNetworks(ctx, neutron, objs)
		return err
	})
	run(func() error {
		cinder, err := openstack.NewBlockStorageV3(sess.pc, eo)
		var notFound *gophercloud.ErrEndpointNotFound
		if errors.As(err, &notFound) {
			// A cloud without Cinder: no storage classes to offer.
			a.log.InfoContext(ctx, "no block-storage endpoint in the catalog: no volume types", "region", eo.Region)
			return nil
		}
		if err != nil {
			return apiError(ctx, "volumev3", "find the endpoint", callerToken, err)
		}
		volumeTypes, err = listVolumeTypes(ctx, cinder)
		return err
	})
	if !a.cfg.SkipFlavorCheck {
		run(func() (err error) { found, err = a.flavors(ctx, sess, eo, objs); return err })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Facts{}, err
	}
	return Facts{
		Image:             image,
		NodeGroupImages:   groupImages,
		ExternalNetworkID: nets.external,
		FixedNetworkID:    nets.fixedNetwork,
		FixedSubnetID:     nets.fixedSubnet,
		VolumeTypes:       volumeTypes,
		Flavors:           found,
	}, nil
}

// serviceFor builds a service client from the caller's catalog; a missing
// endpoint or a failed version discovery is classified like any call.
func (a *Adapter) serviceFor(ctx context.Context, service string, build func() (*gophercloud.ServiceClient, error)) (*gophercloud.ServiceClient, error) {
	sc, err := build()
	if err != nil {
		return nil, apiError(ctx, service, "find the endpoint", callerToken, err)
	}
	return sc, nil
}

// flavors looks up and checks the node groups' flavors (checkFlavors).
func (a *Adapter) flavors(ctx context.Context, sess *callerSession, eo gophercloud.EndpointOpts, objs Objects) (map[string]helmvalues.Flavor, error) {
	nova, err := a.serviceFor(ctx, "compute", func() (*gophercloud.ServiceClient, error) { return openstack.NewComputeV2(sess.pc, eo) })
	if err != nil {
		return nil, err
	}
	return checkFlavors(ctx, nova, objs, flavorMinimums{ramMiB: a.cfg.MinFlavorRAMMiB, vcpus: a.cfg.MinFlavorVCPUs})
}
