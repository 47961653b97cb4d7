package capistatus

import "strings"

// addonItems: every addon must be Deployed. A Failed addon within its grace
// period leads the reason (the provider may still recover it); the others are
// listed with their phase.
func addonItems(req Request, snap Snapshot, cfg Config) []item {
	var items []item
	var waiting []string
	for _, a := range snap.Addons {
		switch p := a.phase(); {
		case a.Deleting:
			waiting = append(waiting, addonName(req.StackID, a)+" (being removed)")
		case p == AddonDeployed:
		case p == AddonFailed:
			items = append(items, item{rankProblem, "addon " + addonName(req.StackID, a) + " failed, retrying for up to " + minutes(cfg.AddonFailureGrace) + ": " + addonFailure(a)})
		default:
			waiting = append(waiting, addonName(req.StackID, a)+" ("+p+")")
		}
	}
	if len(waiting) > 0 {
		items = append(items, item{rankAddons, "addons " + listNames(waiting, 5)})
	}
	return items
}

// addonName drops the release prefix the chart puts on every addon name.
func addonName(stackID string, a Addon) string {
	if n := strings.TrimPrefix(a.Name, stackID+"-"); n != "" {
		return n
	}
	return a.Name
}

func addonFailure(a Addon) string {
	if m := tenantText(a.FailureMessage); m != "" {
		return truncate(m, maxConditionText)
	}
	return "no failure message"
}
