package clusters

import (
	"time"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// Spec is one Magnum cluster as Magnum's database has it at the call: every
// operation starts from it.
type Spec struct {
	Cluster    helmvalues.Cluster
	Template   helmvalues.ClusterTemplate
	NodeGroups []helmvalues.NodeGroup
	// CreatedAt and UpdatedAt are the cluster's timestamps in Magnum; zero
	// when Magnum did not send them.
	CreatedAt, UpdatedAt time.Time
}

// objects are the Magnum objects whose OpenStack references the OpenStack
// adapter resolves.
func (s Spec) objects() openstack.Objects {
	return openstack.Objects{Cluster: s.Cluster, Template: s.Template, NodeGroups: s.NodeGroups}
}
