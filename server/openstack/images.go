package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// Image properties the driver reads (set by the image builder, e.g.
// azimuth-images: kube_version=v1.30.2, os_distro=ubuntu).
const (
	propKubeVersion = "kube_version"
	propOSDistro    = "os_distro"
)

// findImage resolves an image by id or name and checks it can boot a
// cluster: active, with a kube_version property.
func findImage(ctx context.Context, glance *gophercloud.ServiceClient, field, ref string) (helmvalues.Image, error) {
	if ref == "" {
		return helmvalues.Image{}, &ReferenceError{Field: field, Value: ref, Problem: "required: the image gives the cluster its Kubernetes version"}
	}
	img, err := getImage(ctx, glance, field, ref)
	if err != nil {
		return helmvalues.Image{}, err
	}
	if img.Status != images.ImageStatusActive {
		return helmvalues.Image{}, &ReferenceError{Field: field, Value: ref, Problem: fmt.Sprintf("image %s is %s, not active", img.ID, img.Status)}
	}
	kube := property(img, propKubeVersion)
	if kube == "" {
		return helmvalues.Image{}, &ReferenceError{Field: field, Value: ref, Problem: fmt.Sprintf(
			"image %s has no %s property (set it to the Kubernetes version the image was built with, e.g. v1.30.2)", img.ID, propKubeVersion)}
	}
	return helmvalues.Image{ID: img.ID, KubeVersion: kube, OSDistro: property(img, propOSDistro)}, nil
}

func getImage(ctx context.Context, glance *gophercloud.ServiceClient, field, ref string) (*images.Image, error) {
	if uuidLike.MatchString(ref) {
		img, err := images.Get(ctx, glance, ref).Extract()
		if err == nil {
			return img, nil
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, apiError(ctx, "image", "get image "+ref, callerToken, err)
		}
	}
	page, err := images.List(glance, images.ListOpts{Name: ref}).AllPages(ctx)
	if err != nil {
		return nil, apiError(ctx, "image", "list images named "+ref, callerToken, err)
	}
	found, err := images.ExtractImages(page)
	if err != nil {
		return nil, fmt.Errorf("openstack image: reading the image list: %w", err)
	}
	switch len(found) {
	case 0:
		return nil, notFound(field, ref, "image")
	case 1:
		return &found[0], nil
	}
	ids := make([]string, len(found))
	for i, img := range found {
		ids[i] = img.ID
	}
	return nil, ambiguous(field, ref, "image", ids)
}

// property reads a string image property; Glance stores them as strings.
func property(img *images.Image, key string) string {
	v, ok := img.Properties[key]
	if !ok || v == nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
