package clusters

import (
	"crypto/sha256"
	"io"

	"github.com/magnum-capi/magnum-capi/helmvalues"
)

// stackID names the release of a new cluster with the StackHPC driver's rule
// (sanitized name cut to 30, "-", 12 base32 characters), drawing the 12
// characters from the cluster's uuid instead of randomness. A create retried
// after a crash, before Magnum stored stack_id, thus names the same release
// and finds what the first attempt made instead of leaking it.
func stackID(spec Spec) (string, error) {
	if spec.Cluster.StackID != "" {
		return spec.Cluster.StackID, nil
	}
	return helmvalues.ReleaseName(spec.Cluster.Name, uuidStream(spec.Cluster.UUID))
}

// uuidStream is an endless deterministic byte stream derived from a uuid.
func uuidStream(uuid string) io.Reader {
	return &hashStream{seed: []byte("magnum-capi/stack-id/" + uuid)}
}

type hashStream struct {
	seed    []byte
	counter byte
	buf     []byte
}

func (h *hashStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(h.buf) == 0 {
			sum := sha256.Sum256(append(append([]byte{}, h.seed...), h.counter))
			h.counter++
			h.buf = sum[:]
		}
		c := copy(p[n:], h.buf)
		h.buf = h.buf[c:]
		n += c
	}
	return n, nil
}
