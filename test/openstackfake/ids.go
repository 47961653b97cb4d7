package openstackfake

import (
	"crypto/rand"
	"fmt"
)

// newUUID is a random version-4 UUID, the id format of Glance, Neutron,
// Cinder and (for new flavors) Nova.
func newUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
