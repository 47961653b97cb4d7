package helmvalues

// ArgoCDRegisterLabel is the template label that turns the Argo CD hand-off
// on or off for the template's clusters (docs/gitops.md).
const ArgoCDRegisterLabel = "argocd_register"

// ArgoCDRegister is whether a cluster of the template with these labels is
// registered with Argo CD, given the site's default. A value that does not
// parse counts as not given: Build refuses it when the cluster is created,
// so it can only reach here on a template edited since, and the site's
// choice is the safe reading.
func ArgoCDRegister(templateLabels map[string]string, siteDefault bool) bool {
	raw, ok := templateLabels[ArgoCDRegisterLabel]
	if !ok {
		return siteDefault
	}
	v, expected := parseLabelValue(labelRegistry[ArgoCDRegisterLabel], raw)
	if expected != "" {
		return siteDefault
	}
	return v.(bool)
}
