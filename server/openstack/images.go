package openstack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/pagination"

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
	img, err := finder[images.Image]{
		service: "image", kind: "image",
		get: func(ctx context.Context, id string) (images.Image, error) {
			return value(images.Get(ctx, glance, id).Extract())
		},
		named:   func(name string) pagination.Pager { return images.List(glance, images.ListOpts{Name: name}) },
		extract: images.ExtractImages,
		id:      func(img images.Image) string { return img.ID },
	}.find(ctx, field, ref)
	if err != nil {
		return nil, err
	}
	return &img, nil
}

// property reads a string image property; Glance stores them as strings.
func property(img *images.Image, key string) string {
	v, ok := img.Properties[key]
	if !ok || v == nil {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// findImages resolves the template's image and the worker node groups' own
// (findNodeGroupImages); every bad reference is reported.
func findImages(ctx context.Context, glance *gophercloud.ServiceClient, objs Objects) (helmvalues.Image, map[string]helmvalues.Image, error) {
	image, err := findImage(ctx, glance, "cluster_template.image_id", objs.Template.ImageID)
	groups, groupErr := findNodeGroupImages(ctx, glance, objs)
	if err != nil || groupErr != nil {
		return helmvalues.Image{}, nil, errors.Join(err, groupErr)
	}
	return image, groups, nil
}

// findNodeGroupImages resolves the images of worker node groups that are not
// the template's (by reference, as Magnum holds them), once per reference.
// Groups Magnum is deleting are left out, as the values leave them out.
func findNodeGroupImages(ctx context.Context, glance *gophercloud.ServiceClient, objs Objects) (map[string]helmvalues.Image, error) {
	var (
		out  map[string]helmvalues.Image
		seen = map[string]bool{}
		errs []error
	)
	for _, ng := range objs.NodeGroups {
		ref := ng.ImageID
		if ref == "" || ref == objs.Template.ImageID || ng.Role == "master" || deleting(ng.Status) || seen[ref] {
			continue
		}
		seen[ref] = true
		img, err := findImage(ctx, glance, nodeGroupImageField(ng.Name), ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if out == nil {
			out = map[string]helmvalues.Image{}
		}
		out[ref] = img
	}
	return out, errors.Join(errs...)
}

func deleting(status string) bool {
	return status == "DELETE_IN_PROGRESS" || status == "DELETE_COMPLETE"
}

func nodeGroupImageField(name string) string { return fmt.Sprintf("nodegroups[%s].image_id", name) }
