package clusters

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sort"
	"testing"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	"github.com/magnum-capi/magnum-capi/server/openstack"
)

// fakeKeystone holds one user's application credentials; only the calls
// sweepOrphans makes are answered.
type fakeKeystone struct {
	OpenStack
	creds     []openstack.CredentialRef
	listErr   error
	refuse    map[string]bool
	deleteLog []string
}

func (f *fakeKeystone) CallerCredentials(context.Context, openstack.Caller, helmvalues.Cluster) ([]openstack.CredentialRef, error) {
	return f.creds, f.listErr
}

func (f *fakeKeystone) DeleteCallerCredential(_ context.Context, _ openstack.Caller, _ helmvalues.Cluster, ref openstack.CredentialRef) error {
	if f.refuse[ref.ID] {
		return errors.New("keystone said no")
	}
	f.deleteLog = append(f.deleteLog, ref.ID)
	return nil
}

func TestSweepOrphans(t *testing.T) {
	creds := []openstack.CredentialRef{{ID: "c", Name: "magnum-u-3"}, {ID: "a", Name: "magnum-u-1"}, {ID: "b", Name: "magnum-u-2"}}
	tests := []struct {
		name          string
		keep          string
		listErr       error
		refuse        map[string]bool
		wantDeleted   []string
		wantRemaining []string
	}{
		{"create retry: all are orphans", "", nil, nil, []string{"a", "b", "c"}, nil},
		{"the Secret's credential is kept", "b", nil, nil, []string{"a", "c"}, []string{"b"}},
		{"a refused delete stays listed", "b", nil, map[string]bool{"c": true}, []string{"a"}, []string{"b", "c"}},
		{"listing fails: nothing deleted, the operation goes on", "b", errors.New("503"), nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeKeystone{creds: creds, listErr: tt.listErr, refuse: tt.refuse}
			s := &Service{openstack: f, log: slog.New(slog.DiscardHandler)}
			remaining := s.sweepOrphans(context.Background(), Caller{}, Spec{Cluster: helmvalues.Cluster{UUID: "u", StackID: "demo"}}, tt.keep)
			if !reflect.DeepEqual(f.deleteLog, tt.wantDeleted) {
				t.Errorf("deleted %v, want %v", f.deleteLog, tt.wantDeleted)
			}
			var ids []string
			for id := range remaining {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			if !reflect.DeepEqual(ids, tt.wantRemaining) {
				t.Errorf("remaining %v, want %v", ids, tt.wantRemaining)
			}
		})
	}
}
