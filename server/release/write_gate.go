package release

import (
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// A create's own preparation — the Keystone application credential and its
// Secret, the CA Secrets — is what the chart's objects refer to by name,
// and Cluster API must find the CA Secrets before the control plane is
// reconciled (or it makes CAs of its own). None of it is needed to read the
// release's history, render the chart or check the objects for conflicts,
// which took most of a create before its first write. Target.BeforeWrite
// lets the caller run that preparation beside Deploy: Deploy's first write
// of the release waits for it, and nothing of the release is written if it
// fails.
//
// Every Helm action writes the release record before any object: an
// install and an upgrade store the new revision (pending) first, and a
// revision left pending is marked failed before the upgrade that follows.
// So the gate sits on the record's storage driver, whatever client writes
// the objects.

// gatedRecords is a release storage driver whose every write first asks
// ready, which waits for the caller's work the first time and gives its
// result after that; a write it refuses is not made. wrote (nil for none)
// hears of every write that succeeded.
type gatedRecords struct {
	driver.Driver
	ready func() error
	wrote func()
}

func (g gatedRecords) Create(key string, rls *release.Release) error {
	if err := g.wait(); err != nil {
		return err
	}
	return g.done(g.Driver.Create(key, rls))
}

func (g gatedRecords) Update(key string, rls *release.Release) error {
	if err := g.wait(); err != nil {
		return err
	}
	return g.done(g.Driver.Update(key, rls))
}

func (g gatedRecords) Delete(key string) (*release.Release, error) {
	if err := g.wait(); err != nil {
		return nil, err
	}
	rls, err := g.Driver.Delete(key)
	return rls, g.done(err)
}

func (g gatedRecords) done(err error) error {
	if err == nil && g.wrote != nil {
		g.wrote()
	}
	return err
}

func (g gatedRecords) wait() error {
	if err := g.ready(); err != nil {
		return fmt.Errorf("before writing the release: %w", err)
	}
	return nil
}
