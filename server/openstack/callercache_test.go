package openstack

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

func TestCallerCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	key := func(i int) [32]byte { return sha256.Sum256([]byte(fmt.Sprint(i))) }
	tests := []struct {
		name    string
		expires time.Time // the token's expiry
		after   time.Duration
		wantHit bool
	}{
		{"fresh", now.Add(time.Hour), time.Minute, true},
		{"past the TTL", now.Add(time.Hour), callerTTL, false},
		{"token expiring soon is kept until the margin", now.Add(2 * time.Minute), time.Minute, true},
		{"token inside the margin", now.Add(2 * time.Minute), 2*time.Minute - expiryMargin, false},
		{"token already in the margin is not kept", now.Add(10 * time.Second), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCallerCache()
			c.now = func() time.Time { return now }
			c.put(key(1), &callerSession{expires: tt.expires})
			c.now = func() time.Time { return now.Add(tt.after) }
			if hit := c.get(key(1)) != nil; hit != tt.wantHit {
				t.Fatalf("hit = %v, want %v", hit, tt.wantHit)
			}
		})
	}
}

func TestCallerCacheIsBounded(t *testing.T) {
	c := newCallerCache()
	for i := 0; i < callerCacheSize*2; i++ {
		c.put(sha256.Sum256([]byte(fmt.Sprint(i))), &callerSession{})
	}
	if n := len(c.entries); n > callerCacheSize {
		t.Fatalf("%d entries, want at most %d", n, callerCacheSize)
	}
}
