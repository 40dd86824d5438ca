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

func TestConsecutivePortsAreFreeAndOutsideTheEphemeralRange(t *testing.T) {
	eph := ephemeral()
	for _, n := range []int{1, 2, 5} {
		p, err := Consecutive(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bindable(p, n) {
			t.Fatalf("Consecutive(%d) = %d, but %d to %d cannot all be bound", n, p, p, p+n-1)
		}
		if (p >= eph.lo && p <= eph.hi) || (p+n-1 >= eph.lo && p+n-1 <= eph.hi) || (p < eph.lo && p+n-1 >= eph.lo) {
			t.Fatalf("Consecutive(%d) = %d, which reaches the ephemeral ports %d-%d", n, p, eph.lo, eph.hi)
		}
	}
}

func TestABoundPortIsNotBindable(t *testing.T) {
	p, err := Consecutive(3)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+2)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if bindable(p, 3) {
		t.Fatalf("ports %d to %d were bindable with %d bound", p, p+2, p+2)
	}
	if !bindable(p, 2) {
		t.Fatalf("ports %d and %d were not bindable", p, p+1)
	}
}
