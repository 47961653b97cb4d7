package capicontrollers

import (
	"fmt"
	"net/netip"
	"testing"
)

func TestFloatingIPs(t *testing.T) {
	a := newIPAllocator()
	first := a.floatingIP("ns/a")
	if first != "203.0.113.1" {
		t.Errorf("first floating IP %s", first)
	}
	if again := a.floatingIP("ns/a"); again != first {
		t.Errorf("the same holder got %s then %s", first, again)
	}
	second := a.floatingIP("ns/b")
	if second == first {
		t.Errorf("two holders share %s", first)
	}
	a.releaseFloatingIP("ns/a")
	seen := map[string]bool{second: true}
	for i := 0; i < len(floatingAddrs)-1; i++ {
		ip := a.floatingIP(fmt.Sprintf("ns/c%d", i))
		if seen[ip] {
			t.Fatalf("address %s handed out twice while free ones remain", ip)
		}
		seen[ip] = true
		addr := netip.MustParseAddr(ip)
		inPool := false
		for _, p := range floatingPools {
			inPool = inPool || (p.Contains(addr) && addr != p.Addr() && addr != lastAddr(p))
		}
		if !inPool {
			t.Fatalf("address %s is outside the pools' host addresses", ip)
		}
	}
	// Every address is held: the next holder shares one rather than fail.
	if ip := a.floatingIP("one-too-many"); ip == "" {
		t.Error("no address once the pools are used up")
	}
}

func TestFixedIPs(t *testing.T) {
	a := newIPAllocator()
	tests := []struct {
		holder, want string
	}{
		{"lb", "192.168.3.10"},
		{"m1", "192.168.3.11"},
		{"lb", "192.168.3.10"},
	}
	for _, tt := range tests {
		got, err := a.fixedIP("ns/c", "192.168.3.0/24", tt.holder)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %s %v, want %s", tt.holder, got, err, tt.want)
		}
	}
	a.releaseFixedIP("ns/c", "lb")
	if got, _ := a.fixedIP("ns/c", "192.168.3.0/24", "m2"); got != "192.168.3.10" {
		t.Errorf("a released address is not reused: got %s", got)
	}
	if got, _ := a.fixedIP("ns/other", "192.168.3.0/24", "m1"); got != "192.168.3.10" {
		t.Errorf("clusters share no subnet: got %s", got)
	}
	if _, err := a.fixedIP("ns/c", "not-a-cidr", "x"); err == nil {
		t.Error("a bad CIDR is accepted")
	}
	// A /28 has hosts .10 to .14 past the reserved ones.
	for i := 0; i < 5; i++ {
		if _, err := a.fixedIP("ns/tiny", "10.0.0.0/28", fmt.Sprintf("m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.fixedIP("ns/tiny", "10.0.0.0/28", "over"); err == nil {
		t.Error("a full subnet still hands out addresses")
	}
}
