package freeport

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

// The launcher's rendezvous port was once taken by another job's rank
// between the launcher closing it and rank 0 binding it: ports handed out
// for bind(0) are the ones other programs get without asking.
func TestTheRendezvousPortIsOutsideTheEphemeralRange(t *testing.T) {
	eph := ephemeral()
	for range 20 {
		addr, err := Local()
		if err != nil {
			t.Fatal(err)
		}
		_, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		if port >= eph.lo && port <= eph.hi {
			t.Fatalf("Local() = %s, inside the ephemeral ports %d-%d", addr, eph.lo, eph.hi)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("Local() = %s, which cannot be bound: %v", addr, err)
		}
		l.Close()
	}
}

func TestCandidatePortsSkipTheEphemeralRange(t *testing.T) {
	for _, eph := range []portRange{{32768, 60999}, {49152, 65535}, {1024, 60000}, {1, 40000}, {2000, 2010}} {
		ports := candidates(eph, 500)
		if len(ports) != 500 {
			t.Fatalf("%v: %d ports, want 500", eph, len(ports))
		}
		seen := map[int]bool{}
		for _, p := range ports {
			if p < 1024 || p > 65535 || (p >= eph.lo && p <= eph.hi) || seen[p] {
				t.Fatalf("%v: port %d (seen before: %v)", eph, p, seen[p])
			}
			seen[p] = true
		}
	}
	if ports := candidates(portRange{1024, 65535}, 8); len(ports) != 0 {
		t.Fatalf("no port is outside 1024-65535, got %v", ports)
	}
	if ports := candidates(portRange{1024, 65533}, 8); !slices.Equal(slices.Sorted(slices.Values(ports)), []int{65534, 65535}) {
		t.Fatalf("two ports are outside 1024-65533, got %v", ports)
	}
}
