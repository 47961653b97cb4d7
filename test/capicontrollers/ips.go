package capicontrollers

import (
	"fmt"
	"net/netip"
	"sync"
)

// floatingPools are the documentation ranges (RFC 5737) the fake
// floating IPs come from: 762 addresses before they are reused.
var floatingPools = []netip.Prefix{
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
}

// floatingAddrs lists the host addresses of floatingPools in order.
var floatingAddrs = func() []netip.Addr {
	var all []netip.Addr
	for _, p := range floatingPools {
		for ip := p.Addr().Next(); p.Contains(ip) && ip != lastAddr(p); ip = ip.Next() {
			all = append(all, ip)
		}
	}
	return all
}()

// defaultNodeCIDR is the subnet used when the OpenStackCluster names none
// (CAPO then uses a pre-existing network the provider knows nothing of).
const defaultNodeCIDR = "10.0.0.0/24"

// ipAllocator hands out floating IPs (one per cluster load balancer) and
// fixed IPs (one per machine, inside its cluster's subnet), remembering who
// holds each so that a retried reconcile gets the same address and a
// released one can be reused.
type ipAllocator struct {
	mu       sync.Mutex
	floating map[string]netip.Addr            // holder → address
	usedFIP  map[netip.Addr]string            // address → holder
	fixed    map[string]map[string]netip.Addr // subnet key → holder → address
	nextFIP  int
}

func newIPAllocator() *ipAllocator {
	return &ipAllocator{
		floating: map[string]netip.Addr{},
		usedFIP:  map[netip.Addr]string{},
		fixed:    map[string]map[string]netip.Addr{},
	}
}

// floatingIP returns the floating IP held by holder, allocating one.
func (a *ipAllocator) floatingIP(holder string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.floating[holder]; ok {
		return ip.String()
	}
	all := floatingAddrs
	// Take the next free address round-robin; when every address is held,
	// share one: these addresses route nowhere anyway.
	var ip netip.Addr
	for i := 0; i < len(all); i++ {
		cand := all[(a.nextFIP+i)%len(all)]
		if _, used := a.usedFIP[cand]; !used {
			ip = cand
			a.nextFIP = (a.nextFIP + i + 1) % len(all)
			break
		}
	}
	if !ip.IsValid() {
		ip = all[a.nextFIP%len(all)]
		a.nextFIP++
	}
	a.floating[holder] = ip
	a.usedFIP[ip] = holder
	return ip.String()
}

func (a *ipAllocator) releaseFloatingIP(holder string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ip, ok := a.floating[holder]; ok {
		delete(a.floating, holder)
		if a.usedFIP[ip] == holder {
			delete(a.usedFIP, ip)
		}
	}
}

// fixedIP returns the address of holder in the subnet (a CIDR) of the
// cluster identified by key, allocating the lowest free host from .10 on,
// as Neutron's DHCP pools start past the router and DHCP ports.
func (a *ipAllocator) fixedIP(key, cidr, holder string) (string, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", fmt.Errorf("subnet %q: %w", cidr, err)
	}
	prefix = prefix.Masked()
	a.mu.Lock()
	defer a.mu.Unlock()
	subnet := a.fixed[key]
	if subnet == nil {
		subnet = map[string]netip.Addr{}
		a.fixed[key] = subnet
	}
	if ip, ok := subnet[holder]; ok && prefix.Contains(ip) {
		return ip.String(), nil
	}
	used := map[netip.Addr]bool{}
	for _, ip := range subnet {
		used[ip] = true
	}
	ip := prefix.Addr()
	for i := 0; i < 10; i++ {
		ip = ip.Next()
	}
	for ; prefix.Contains(ip) && ip != lastAddr(prefix); ip = ip.Next() {
		if !used[ip] {
			subnet[holder] = ip
			return ip.String(), nil
		}
	}
	return "", fmt.Errorf("subnet %s has no free address for %s", cidr, holder)
}

func (a *ipAllocator) releaseFixedIP(key, holder string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.fixed[key], holder)
	if len(a.fixed[key]) == 0 {
		delete(a.fixed, key)
	}
}

// lastAddr is the broadcast address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := 32 - p.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= (1 << host) - 1
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
