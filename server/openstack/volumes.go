package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// listVolumeTypes is every volume type the caller may use (public ones and
// private ones shared with the project); each becomes a storage class.
func listVolumeTypes(ctx context.Context, cinder *gophercloud.ServiceClient) ([]helmvalues.VolumeType, error) {
	found, err := listAll(ctx, volumetypes.List(cinder, nil), "volumev3", "volume type", "", volumetypes.ExtractVolumeTypes)
	if err != nil {
		return nil, err
	}
	out := make([]helmvalues.VolumeType, 0, len(found))
	for _, vt := range found {
		out = append(out, helmvalues.VolumeType{
			ID: vt.ID, Name: vt.Name, IsPublic: vt.IsPublic, Description: vt.Description, ExtraSpecs: vt.ExtraSpecs,
		})
	}
	return out, nil
}
