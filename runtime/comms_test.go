package runtime

import (
	"testing"

	"github.com/gluaproject/glua/device"
)

// countedComm is a group that holds device memory of its own and counts
// how often it was left.
type countedComm struct {
	device.Comm
	closes *int
}

func (c countedComm) Close() error        { *c.closes++; return nil }
func (c countedComm) DeviceBytes() uint64 { return 1 << 20 }

// Closing the open groups leaves each group still open exactly once: one
// the program closed itself is neither left again nor counted in the
// device memory the groups hold.
func TestOpenCommsCloseLeavesEachOpenGroupOnce(t *testing.T) {
	rt := &Runtime{}
	var closes [3]int
	var comms []*Comm
	for i := range closes {
		c := &Comm{rt: rt, comm: countedComm{closes: &closes[i]}}
		rt.comms.add(c)
		comms = append(comms, c)
	}
	if got := rt.comms.deviceBytes(); got != 3<<20 {
		t.Fatalf("three open groups hold %d bytes, want %d", got, 3<<20)
	}
	if err := comms[1].Close(); err != nil {
		t.Fatal(err)
	}
	if got := rt.comms.deviceBytes(); got != 2<<20 {
		t.Fatalf("after one group closed the others hold %d bytes, want %d", got, 2<<20)
	}
	if err := rt.comms.Close(); err != nil {
		t.Fatal(err)
	}
	if closes != [3]int{1, 1, 1} {
		t.Fatalf("groups left %v times, want once each", closes)
	}
	if got := rt.comms.deviceBytes(); got != 0 {
		t.Fatalf("after Close the groups still hold %d bytes", got)
	}
}
