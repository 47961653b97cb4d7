package helmvalues

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"regexp"
	"strings"
)

// Names compatible with the StackHPC magnum-capi-helm driver, so that its
// clusters can be adopted without renaming a single object.

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// sanitizedName is StackHPC's sanitized_name: lowercase, every run of
// characters other than [a-z0-9] becomes one "-", and leading and trailing
// "-" are trimmed.
func sanitizedName(name string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

const (
	// releaseBaseMax is StackHPC's cut of the sanitized cluster name.
	releaseBaseMax = 30
	// releaseIDLen is the length of the hashed part: 12 lowercase base32
	// characters (60 bits).
	releaseIDLen = 12
	// maxReleaseName is Helm's limit on release names.
	maxReleaseName = 53
	// maxStackID is the longest release name ReleaseName (and the StackHPC
	// driver) makes: 30 + "-" + 12. Build accepts no longer stack_id, which
	// keeps "<release>-control-plane", "<release>-cloud-credentials" and the
	// node group objects within 63 characters.
	maxStackID = releaseBaseMax + 1 + releaseIDLen
	// maxObjectName is the limit on label values and on the names the chart
	// derives (`<release>-<node group>`).
	maxObjectName = 63
)

// ReleaseName is a new cluster's Helm release name, which is also its Magnum
// stack_id: StackHPC's shape (the sanitized cluster name cut to 30
// characters, "-", 12 lowercase base32 characters), with the 12 characters
// taken from a hash of the cluster's uuid instead of randomness, so a create
// retried before Magnum stored stack_id names the same release. The 12
// characters are the lowercase base32 encoding of the first 8 bytes of
// SHA-256("magnum-capi/stack-id/" + uuid + "\x00"), cut to 12 (60 bits).
// Unlike StackHPC, a trailing "-" left by the cut is dropped, and a name that
// sanitizes to nothing becomes "cluster". Existing stack_ids, ours and
// StackHPC's, are kept as they are: the name is made once, at create.
func ReleaseName(clusterName, clusterUUID string) string {
	base := sanitizedName(clusterName)
	if len(base) > releaseBaseMax {
		base = strings.TrimRight(base[:releaseBaseMax], "-")
	}
	if base == "" {
		base = "cluster"
	}
	sum := sha256.Sum256([]byte("magnum-capi/stack-id/" + clusterUUID + "\x00"))
	id := strings.ToLower(base32.StdEncoding.EncodeToString(sum[:8]))[:releaseIDLen]
	return base + "-" + id
}

// IsReleaseName reports whether id can be a stack_id: a DNS label no longer
// than the names ReleaseName (and the StackHPC driver) make. Anything else
// would name objects Kubernetes refuses, or reach outside the cluster's own
// names.
func IsReleaseName(id string) bool { return len(id) <= maxStackID && isDNSLabel(id) }

// Namespace is the management-cluster namespace of a project's clusters:
// "<prefix>-<project id with everything but [a-z0-9] removed>".
func Namespace(prefix, projectID string) string {
	return prefix + "-" + nonAlnumChar.ReplaceAllString(strings.ToLower(projectID), "")
}

var nonAlnumChar = regexp.MustCompile(`[^a-z0-9]`)

// chartNodeGroupName is the chart's rule for node group names.
var chartNodeGroupName = regexp.MustCompile(`^[a-z][a-z0-9-]+[a-z0-9]$`)

// reservedNodeGroupNames would collide with objects the chart names after the
// control plane ("<release>-control-plane" MachineHealthCheck).
var reservedNodeGroupNames = map[string]bool{"control-plane": true}

const nodeGroupHashLen = 8

// NodeGroupName is the chart's name for a Magnum node group. It is StackHPC's
// sanitized name whenever that is a valid chart name and `<release>-<name>`
// fits in 63 characters, so adopted clusters keep their MachineDeployments.
// Otherwise it is a deterministic valid name: the sanitized name (prefixed
// "ng-" when it does not start with a letter), cut to fit, then "-" and 8 hex
// characters of the SHA-256 of the Magnum name. The object names derived from
// it (MachineDeployment, MachineHealthCheck, the node-group label value) then
// stay within 63 characters for release names up to 53 characters, Helm's
// limit.
func NodeGroupName(releaseName, nodeGroupName string) string {
	name := sanitizedName(nodeGroupName)
	budget := maxObjectName - len(releaseName) - 1
	if chartNodeGroupName.MatchString(name) && len(name) <= budget && !reservedNodeGroupNames[name] {
		return name
	}
	sum := sha256.Sum256([]byte(nodeGroupName))
	hash := hex.EncodeToString(sum[:])[:nodeGroupHashLen]
	base := name
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "ng-" + base
		base = strings.TrimRight(base, "-")
	}
	if room := budget - len(hash) - 1; len(base) > room {
		if room < 1 {
			// Only reachable with release names longer than Helm allows.
			return "n" + hash
		}
		base = strings.TrimRight(base[:room], "-")
	}
	return base + "-" + hash
}
