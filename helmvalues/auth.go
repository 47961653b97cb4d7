package helmvalues

import (
	"regexp"
	"strings"
)

var oidcLabels = []string{"oidc_client_id", "oidc_username_claim", "oidc_username_prefix", "oidc_groups_claim", "oidc_groups_prefix", "oidc_signing_algs"}

var projectIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// auth maps OpenID Connect and Keystone authentication.
func (b *builder) auth() {
	issuer := b.labels.str("oidc_issuer_url")
	if issuer == "" {
		for _, name := range oidcLabels {
			if b.labels.given[name] {
				b.warn("label %s has no effect without oidc_issuer_url", name)
			}
		}
	} else {
		clientID := b.labels.str("oidc_client_id")
		if clientID == "" {
			b.p.field("labels.oidc_client_id", "", "a client id, because oidc_issuer_url is set")
		}
		put(b.values, issuer, "oidc", "issuerUrl")
		put(b.values, clientID, "oidc", "clientId")
		for label, key := range map[string]string{
			"oidc_username_claim": "usernameClaim", "oidc_username_prefix": "usernamePrefix",
			"oidc_groups_claim": "groupsClaim", "oidc_groups_prefix": "groupsPrefix",
		} {
			if v := b.labels.str(label); v != "" {
				put(b.values, v, "oidc", key)
			}
		}
		if algs := b.labels.list("oidc_signing_algs"); len(algs) > 0 {
			put(b.values, strings.Join(algs, ","), "oidc", "signingAlgs")
		}
	}

	if !b.labels.boolean("keystone_auth_enabled") {
		return
	}
	// The cluster's project and the configured URL, never the requester's
	// context: an admin acting on another project must not rewrite them.
	url := b.cfg.KeystoneAuthURL
	if url == "" {
		b.p.config("values.keystoneAuthURL", "", "keystone_auth_enabled is set but the sidecar has no values.keystoneAuthURL configured")
	}
	project := b.in.Cluster.ProjectID
	if !projectIDPattern.MatchString(project) {
		b.p.field("cluster.project_id", project, "the Keystone id of the cluster's project")
	}
	put(b.values, "k8s-keystone-auth", "authWebhook")
	put(b.values, map[string]any{
		"enabled": true,
		"values":  map[string]any{"openstackAuthUrl": url, "projectId": project},
	}, "addons", "openstack", "k8sKeystoneAuth")
}
