package magnum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// pollEvery is how often a waiting test asks `coe cluster show`: Magnum's
// periodic status sync runs every 10 s.
const pollEvery = 5 * time.Second

// Show runs `openstack coe <what> show <args>` and returns its fields.
func (l *Lane) Show(ctx context.Context, what string, args ...string) (map[string]any, error) {
	var out map[string]any
	err := l.CLI.JSON(ctx, &out, append(append([]string{"coe"}, strings.Fields(what)...), append([]string{"show"}, args...)...)...)
	return out, err
}

// notFound reports whether a CLI failure is Magnum's 404.
func notFound(err error) bool {
	var cliErr *CLIError
	return errors.As(err, &cliErr) && (strings.Contains(cliErr.Output, "could not be found") || strings.Contains(cliErr.Output, "(HTTP 404)"))
}

// halfDestroyed says err is Magnum's answer to a show of a cluster its
// periodic sync is removing: on DELETE_COMPLETE it destroys the cluster's
// node groups one by one, each in its own transaction, and the cluster
// last (magnum/service/periodic.py, Magnum 15 to 23), so a show in between
// finds a cluster whose master_count (the sum of its master node groups)
// is 0, which the API's own type refuses: "Invalid input for
// field/attribute master_count (HTTP 400)". A Magnum defect every driver
// meets (seen in Magnum 20's lane); the next show answers 404.
func halfDestroyed(err error) bool {
	var cliErr *CLIError
	return errors.As(err, &cliErr) && strings.Contains(cliErr.Output, "(HTTP 400)") &&
		(strings.Contains(cliErr.Output, "field/attribute master_count") || strings.Contains(cliErr.Output, "field/attribute node_count"))
}

// Transition is a status a waiting test saw, and when.
type Transition struct {
	Status, Reason string
	After          time.Duration
}

func (t Transition) String() string {
	if t.Reason == "" {
		return fmt.Sprintf("%s after %s", t.Status, t.After.Round(time.Second))
	}
	return fmt.Sprintf("%s (%s) after %s", t.Status, t.Reason, t.After.Round(time.Second))
}

// Wait polls `coe <what> show <args>` until status is want ("gone": until
// Magnum answers 404). It fails early on a *_FAILED status that is not
// want, and returns the last fields and the transitions seen.
func (l *Lane) Wait(ctx context.Context, what string, args []string, want string, timeout time.Duration) (map[string]any, []Transition, error) {
	return l.WaitFrom(ctx, what, args, want, timeout, nil)
}

// WaitFrom is Wait after an action on an object whose fields were before:
// until the conductor has picked the action up (and saved the object:
// updated_at changes), the status shown is the one before the action, not
// its outcome.
func (l *Lane) WaitFrom(ctx context.Context, what string, args []string, want string, timeout time.Duration, before map[string]any) (map[string]any, []Transition, error) {
	start := time.Now()
	var seen []Transition
	for {
		fields, err := l.Show(ctx, what, args...)
		switch {
		case want == "gone" && notFound(err):
			seen = append(seen, Transition{Status: "gone", After: time.Since(start)})
			if l.Watch != nil {
				l.Watch(seen[len(seen)-1])
			}
			return nil, seen, nil
		case want == "gone" && what == "cluster" && halfDestroyed(err):
			if len(seen) == 0 || seen[len(seen)-1].Status != "half destroyed by Magnum" {
				seen = append(seen, Transition{Status: "half destroyed by Magnum", After: time.Since(start)})
			}
			if time.Since(start) > timeout {
				return nil, seen, fmt.Errorf("coe %s %s: Magnum still refuses to show it after %s: %w", what, strings.Join(args, " "), timeout, err)
			}
			select {
			case <-ctx.Done():
				return nil, seen, ctx.Err()
			case <-time.After(pollEvery):
			}
			continue
		case err != nil:
			return nil, seen, err
		}
		status, _ := fields["status"].(string)
		reason, _ := fields["status_reason"].(string)
		if len(seen) == 0 || seen[len(seen)-1].Status != status {
			seen = append(seen, Transition{Status: status, Reason: reason, After: time.Since(start)})
			if l.Watch != nil {
				l.Watch(seen[len(seen)-1])
			}
		}
		stale := before != nil && status == before["status"] && fields["updated_at"] == before["updated_at"] &&
			time.Since(start) < 2*time.Minute
		switch {
		case stale:
		case status == want:
			return fields, seen, nil
		case strings.HasSuffix(status, "_FAILED"):
			return fields, seen, fmt.Errorf("coe %s %s reached %s waiting for %s: %s (seen %v)", what, strings.Join(args, " "), status, want, reason, seen)
		}
		if time.Since(start) > timeout {
			return fields, seen, fmt.Errorf("coe %s %s still %s after %s waiting for %s (seen %v)", what, strings.Join(args, " "), status, timeout, want, seen)
		}
		select {
		case <-ctx.Done():
			return fields, seen, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// WaitCluster waits for a cluster's status (or "gone").
func (l *Lane) WaitCluster(ctx context.Context, name, want string) (map[string]any, []Transition, error) {
	return l.Wait(ctx, "cluster", []string{name}, want, 10*time.Minute)
}

// strs is a CLI field that is a list of strings.
func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, i := range items {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// StackID is a cluster's backend id as `coe cluster show` gives it:
// stack_id, or cluster_id from API microversion 1.13 (Magnum 23).
func StackID(fields map[string]any) string {
	for _, key := range []string{"stack_id", "cluster_id"} {
		if id, ok := fields[key].(string); ok && id != "" && id != "-" && id != "None" {
			return id
		}
	}
	return ""
}
