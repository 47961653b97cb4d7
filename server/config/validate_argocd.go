package config

import (
	"errors"
	"os"
	"regexp"
)

// dnsLabel is a Kubernetes namespace name (RFC 1123 label).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// dnsSubdomain is an object name such as an AppProject's.
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// validate checks the GitOps hand-off's options when it is enabled: a
// disabled section is never read.
func (a ArgoCD) validate(bad func(option, value, problem string)) {
	if !a.Enabled {
		return
	}
	if !dnsLabel.MatchString(a.Namespace) {
		bad("argocd.namespace", a.Namespace, "expected a namespace name: 1-63 characters of [a-z0-9-], starting and ending with a letter or digit")
	}
	if a.Kubeconfig != "" {
		if _, err := os.Stat(a.Kubeconfig); err != nil {
			bad("argocd.kubeconfig", a.Kubeconfig, "cannot be read: "+errors.Unwrap(err).Error())
		}
	} else if a.Context != "" {
		bad("argocd.context", a.Context, "a context is read from argocd.kubeconfig: set it too (empty kubeconfig: the management cluster)")
	}
	// Without a project a registered cluster may be deployed to by every
	// Argo CD project, whoever defines it.
	if a.Project == "" {
		bad("argocd.project", a.Project, "required when argocd.enabled is true: the name of the Argo CD AppProject the clusters are scoped to")
	} else if len(a.Project) > 253 || !dnsSubdomain.MatchString(a.Project) {
		bad("argocd.project", a.Project, "expected the name of an Argo CD AppProject (lower-case letters, digits, '-' and '.')")
	}
}
