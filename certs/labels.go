package certs

import "strings"

// Labels the StackHPC driver puts on every Secret it creates. Using the same
// keys lets this driver find (and clean up) Secrets of clusters it adopts.
const (
	ProjectIDLabel   = "magnum.openstack.org/project-id"
	UserIDLabel      = "magnum.openstack.org/user-id"
	ClusterUUIDLabel = "magnum.openstack.org/cluster-uuid"
	// ClusterNameLabel is CAPI's; CAPI >= 1.5 only reads certificate Secrets
	// that carry it.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
)

// Owner identifies the Magnum cluster the Secrets belong to.
type Owner struct {
	Namespace   string
	StackID     string
	ClusterUUID string
	ProjectID   string
	UserID      string
}

// Labels are the labels on every Secret the driver creates for a cluster.
func (o Owner) Labels() map[string]string {
	return map[string]string{
		ProjectIDLabel:   labelValue(o.ProjectID),
		UserIDLabel:      labelValue(o.UserID),
		ClusterUUIDLabel: labelValue(o.ClusterUUID),
	}
}

func (o Owner) certificateLabels() map[string]string {
	l := o.Labels()
	l[ClusterNameLabel] = o.StackID
	return l
}

// labelValue fits an OpenStack id into a label value (at most 63 characters
// of [A-Za-z0-9._-], alphanumeric at both ends). Keystone ids are 32 hex
// characters and pass unchanged; federated or LDAP user ids can be longer and
// are cut, which keeps them useful for selection without failing the create.
func labelValue(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}
