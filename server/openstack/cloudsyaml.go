package openstack

import (
	"bytes"
	"errors"

	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/yaml"
)

// cloudName is the one cloud of a cluster's clouds.yaml; the chart's
// identityRef names it.
const cloudName = "openstack"

// clusterCloud is what a cluster's clouds.yaml says besides the credential.
type clusterCloud struct {
	AuthURL   string
	Region    string
	Interface string
	Verify    bool
}

// cloudsYAML renders the StackHPC driver's layout (keys sorted, as
// yaml.safe_dump writes them), so clusters it created and ours read alike:
//
//	clouds:
//	  openstack:
//	    auth: {application_credential_id, application_credential_secret, auth_url}
//	    auth_type: v3applicationcredential
//	    identity_api_version: 3
//	    interface: public
//	    region_name: RegionOne
//	    verify: true
//
// The CA bundle is not referenced here: it travels as the Secret's cacert key.
func cloudsYAML(c clusterCloud, id, secret string) ([]byte, error) {
	cloud := map[string]any{
		"auth": map[string]any{
			"auth_url":                      c.AuthURL,
			"application_credential_id":     id,
			"application_credential_secret": secret,
		},
		"auth_type":            "v3applicationcredential",
		"identity_api_version": 3,
		"interface":            c.Interface,
		"verify":               c.Verify,
	}
	if c.Region != "" {
		cloud["region_name"] = c.Region
	}
	return yaml.Marshal(map[string]any{"clouds": map[string]any{cloudName: cloud}})
}

// CredentialIDFromClouds reads clouds.openstack.auth.application_credential_id
// from a cluster's clouds.yaml (ours or the StackHPC driver's).
func (a *Adapter) CredentialIDFromClouds(raw []byte) (string, error) {
	return credentialIDFromClouds(raw)
}

func credentialIDFromClouds(raw []byte) (string, error) {
	auth, err := credentialFromClouds(raw)
	return auth.ID, err
}

// credentialAuth is the application credential a cluster's clouds.yaml
// authenticates with.
type credentialAuth struct{ ID, Secret string }

// credentialFromClouds reads clouds.openstack.auth's application credential
// id and secret with gophercloud's clouds.yaml reader; a missing id is an
// error, a missing secret is not (only acting as the credential needs it,
// and Keystone then refuses).
func credentialFromClouds(raw []byte) (credentialAuth, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return credentialAuth{}, &CloudsYAMLError{Problem: "empty"}
	}
	if _, err := cloudEntry(raw, cloudName); errors.Is(err, errNoSuchCloud) {
		return credentialAuth{}, &CloudsYAMLError{Problem: "no cloud named " + cloudName}
	} else if err != nil {
		return credentialAuth{}, &CloudsYAMLError{Problem: "not YAML: " + err.Error()}
	}
	ao, _, _, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(raw)), clouds.WithCloudName(cloudName))
	if err != nil {
		return credentialAuth{}, &CloudsYAMLError{Problem: "cloud " + cloudName + ": " + yamlProblem(err)}
	}
	if ao.ApplicationCredentialID == "" {
		return credentialAuth{}, &CloudsYAMLError{Problem: "cloud " + cloudName + " has no auth.application_credential_id"}
	}
	return credentialAuth{ID: ao.ApplicationCredentialID, Secret: ao.ApplicationCredentialSecret}, nil
}
