package metrics

// magnumStatuses are the values of Magnum's ClusterStatus field
// (magnum/objects/fields.py); "" is a cluster Magnum has not given one yet.
var magnumStatuses = func() map[string]bool {
	set := map[string]bool{"": true}
	for _, op := range []string{"CREATE", "UPDATE", "DELETE", "RESUME", "RESTORE", "ROLLBACK", "SNAPSHOT", "CHECK", "ADOPT"} {
		for _, state := range []string{"_IN_PROGRESS", "_FAILED", "_COMPLETE"} {
			set[op+state] = true
		}
	}
	return set
}()

func statusLabel(s string) string {
	if magnumStatuses[s] {
		if s == "" {
			return "none"
		}
		return s
	}
	return "other"
}
