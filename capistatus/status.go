package capistatus

import "strings"

// Magnum's cluster and node group statuses (magnum/objects/fields.py
// ClusterStatus), spelled exactly as Magnum stores them.
const (
	CreateInProgress   = "CREATE_IN_PROGRESS"
	CreateFailed       = "CREATE_FAILED"
	CreateComplete     = "CREATE_COMPLETE"
	UpdateInProgress   = "UPDATE_IN_PROGRESS"
	UpdateFailed       = "UPDATE_FAILED"
	UpdateComplete     = "UPDATE_COMPLETE"
	DeleteInProgress   = "DELETE_IN_PROGRESS"
	DeleteFailed       = "DELETE_FAILED"
	DeleteComplete     = "DELETE_COMPLETE"
	ResumeComplete     = "RESUME_COMPLETE"
	ResumeFailed       = "RESUME_FAILED"
	RestoreComplete    = "RESTORE_COMPLETE"
	RollbackInProgress = "ROLLBACK_IN_PROGRESS"
	RollbackFailed     = "ROLLBACK_FAILED"
	RollbackComplete   = "ROLLBACK_COMPLETE"
	SnapshotComplete   = "SNAPSHOT_COMPLETE"
	CheckComplete      = "CHECK_COMPLETE"
	AdoptComplete      = "ADOPT_COMPLETE"
)

// Magnum's health statuses (ClusterHealthStatus).
const (
	Healthy   = "HEALTHY"
	Unhealthy = "UNHEALTHY"
	Unknown   = "UNKNOWN"
)

// KnownStatuses lists every status Magnum can store, for callers that validate
// input (the CLI).
var KnownStatuses = []string{
	CreateInProgress, CreateFailed, CreateComplete,
	UpdateInProgress, UpdateFailed, UpdateComplete,
	DeleteInProgress, DeleteFailed, DeleteComplete,
	ResumeComplete, ResumeFailed, RestoreComplete,
	RollbackInProgress, RollbackFailed, RollbackComplete,
	SnapshotComplete, CheckComplete, AdoptComplete,
}

// IsKnownStatus reports whether s is one of Magnum's statuses.
func IsKnownStatus(s string) bool {
	for _, k := range KnownStatuses {
		if s == k {
			return true
		}
	}
	return false
}

// operation is the verb of a Magnum status: CREATE, UPDATE, DELETE, ROLLBACK...
// Derive keeps it and only moves the suffix.
func operation(status string) string {
	op, _, _ := strings.Cut(status, "_")
	return op
}

func inProgress(status string) bool { return strings.HasSuffix(status, "_IN_PROGRESS") }

func withSuffix(status, suffix string) string { return operation(status) + "_" + suffix }

func completed(status string) string { return withSuffix(status, "COMPLETE") }

func failed(status string) string { return withSuffix(status, "FAILED") }

// drives reports whether Derive owns the outcome of status: the in-progress
// states Magnum's periodic sync polls. ROLLBACK_IN_PROGRESS is evaluated like an
// update because this driver never starts a rollback itself; a cluster adopted
// in that state must still finish instead of being polled forever.
func drives(status string) bool {
	switch status {
	case CreateInProgress, UpdateInProgress, DeleteInProgress, RollbackInProgress:
		return true
	}
	return false
}
