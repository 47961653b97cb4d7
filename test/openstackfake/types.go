package openstackfake

import "time"

// Service names one fake service; the values are Keystone catalog types.
type Service string

// The services the fake answers.
const (
	IdentityService Service = "identity" // token validation in static-token mode
	ImageService    Service = "image"
	NetworkService  Service = "network"
	VolumeService   Service = "volumev3"
	ComputeService  Service = "compute"
)

// Token is a token the fake accepts without asking Keystone.
type Token struct {
	ID          string
	UserID      string
	UserName    string // defaults to UserID
	ProjectID   string
	ProjectName string   // defaults to ProjectID
	Roles       []string // defaults to member and reader
	ExpiresAt   time.Time
}

func (t Token) isAdmin() bool {
	for _, r := range t.Roles {
		if r == "admin" {
			return true
		}
	}
	return false
}

// ImageService is a Glance image. Properties become top-level image properties, as
// Glance returns them (kube_version, os_distro, ...).
type Image struct {
	ID         string // random UUID when empty
	Name       string
	Owner      string // project id
	Visibility string // public (default), private, shared, community
	Status     string // active (default), queued, deactivated, ...
	Hidden     bool   // os_hidden: left out of lists, still readable by id
	Properties map[string]string
}

// NetworkService is a Neutron network.
type Network struct {
	ID        string // random UUID when empty
	Name      string
	ProjectID string
	External  bool // router:external
	Shared    bool
}

// Subnet is a Neutron subnet; AddSubnet appends it to its network.
type Subnet struct {
	ID        string // random UUID when empty
	Name      string
	NetworkID string
	ProjectID string
	CIDR      string // 10.0.0.0/24 when empty
}

// FloatingIP is a Neutron floating IP of a project.
type FloatingIP struct {
	ID        string // random UUID when empty
	Address   string // floating_ip_address
	ProjectID string
	// PortID is the port it is attached to ("" free); PortOwner that
	// port's device_owner (e.g. compute:nova, Octavia).
	PortID, PortOwner string
}

// VolumeType is a Cinder volume type.
type VolumeType struct {
	ID          string // random UUID when empty
	Name        string
	Description string
	Private     bool // is_public: false; only the admin sees it
	ExtraSpecs  map[string]string
}

// Flavor is a Nova flavor.
type Flavor struct {
	ID      string // random UUID when empty
	Name    string
	RAM     int // MiB
	VCPUs   int
	Disk    int  // GiB
	Private bool // only the admin sees it
	// ExtraSpecs are served by GET /flavors/{id}/os-extra_specs (e.g.
	// resources:VGPU, pci_passthrough:alias for GPU flavors).
	ExtraSpecs map[string]string
}

// Failure makes a service misbehave.
type Failure struct {
	// Status is the HTTP status to answer with (500, 503, 429...), with
	// the service's own error body (HAProxy's page for 503). Zero answers
	// normally after Delay.
	Status int
	// Delay holds the answer back; longer than the client's timeout, it
	// is a timeout.
	Delay time.Duration
	// Drop closes the connection without an answer.
	Drop bool
	// Times is how many requests fail; zero means until Heal.
	Times int
}

// Request is one request the fake received.
type Request struct {
	Service Service
	Method  string
	Path    string // with the query string
	// Unrouted: no route of the fake answered it.
	Unrouted bool
}
