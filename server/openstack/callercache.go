package openstack

import (
	"sync"
	"time"
)

// Bounds of the validated-token cache: a token is trusted for at most
// callerTTL after Keystone validated it (a revoked token keeps working that
// long here, as with keystonemiddleware's cache), and at most
// callerCacheSize tokens are kept.
const (
	callerTTL       = 5 * time.Minute
	callerCacheSize = 256
	expiryMargin    = 30 * time.Second
)

// callerCache keeps validated caller sessions by a hash of the auth URL and
// token (the token itself is never a key).
type callerCache struct {
	mu      sync.Mutex
	entries map[[32]byte]cachedSession
	now     func() time.Time
}

type cachedSession struct {
	s     *callerSession
	until time.Time
}

func newCallerCache() *callerCache {
	return &callerCache{entries: map[[32]byte]cachedSession{}, now: time.Now}
}

func (c *callerCache) get(key [32]byte) *callerSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	if !c.now().Before(e.until) {
		delete(c.entries, key)
		return nil
	}
	return e.s
}

func (c *callerCache) put(key [32]byte, s *callerSession) {
	now := c.now()
	until := now.Add(callerTTL)
	if !s.expires.IsZero() && s.expires.Add(-expiryMargin).Before(until) {
		until = s.expires.Add(-expiryMargin)
	}
	if !now.Before(until) {
		return // about to expire: not worth keeping
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= callerCacheSize {
		c.evict(now)
	}
	c.entries[key] = cachedSession{s: s, until: until}
}

// evict drops expired entries, and the one closest to expiry if all are
// live. The caller holds c.mu.
func (c *callerCache) evict(now time.Time) {
	var oldestKey [32]byte
	var oldest time.Time
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
			continue
		}
		if oldest.IsZero() || e.until.Before(oldest) {
			oldest, oldestKey = e.until, k
		}
	}
	if len(c.entries) >= callerCacheSize {
		delete(c.entries, oldestKey)
	}
}
