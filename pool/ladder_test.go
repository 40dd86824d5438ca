package pool

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestOOMMessageNamesLimitAndCache(t *testing.T) {
	cases := []struct {
		name string
		e    OOMError
		want string
	}{
		{"with hard limit", OOMError{Requested: 3 * gib / 2, HardLimit: 4 * gib, InUse: 32 * gib / 10, LiveBlocks: 14, Cached: 400 * mib, DeviceFree: 21 * gib / 10, DeviceTotal: 85017296896},
			"out of GPU memory: tried to allocate 1.50 GiB; hard limit 4.00 GiB, 3.20 GiB in use by 14 arrays, 400.00 MiB cached; device 2.10 GiB free of 79.18 GiB"},
		{"no limit, one array", OOMError{Requested: 512, InUse: mib, LiveBlocks: 1, DeviceFree: 0, DeviceTotal: gib},
			"out of GPU memory: tried to allocate 512 B; 1.00 MiB in use by 1 array, 0 B cached; device 0 B free of 1.00 GiB"},
		{"device unknown", OOMError{Requested: 1536, HardLimit: 2 * kib},
			"out of GPU memory: tried to allocate 1.50 KiB; hard limit 2.00 KiB, 0 B in use by 0 arrays, 0 B cached"},
		{"named memory and a hint", OOMError{Requested: 2 * gib, DeviceFree: gib, DeviceTotal: gib, Memory: "CPU backend memory", Hint: "set [cpu] memory"},
			"out of CPU backend memory: tried to allocate 2.00 GiB; 0 B in use by 0 arrays, 0 B cached; device 1.00 GiB free of 1.00 GiB (set [cpu] memory)"},
		{"holders, three of five named", OOMError{Requested: 4 * mib, HardLimit: 64 * mib, InUse: 63 * mib, LiveBlocks: 19, Holders: []Holder{
			{"leak.lua:6", 60 * mib, 15}, {"leak.lua:2", 2 * mib, 2}, {"(allocated from Go)", 512 * kib, 1}, {"a.lua:1", 256 * kib, 1}, {"b.lua:1", 256 * kib, 1}}},
			"out of GPU memory: tried to allocate 4.00 MiB; hard limit 64.00 MiB, 63.00 MiB in use by 19 arrays, 0 B cached\n" +
				"  held by leak.lua:6: 60.00 MiB in 15 arrays; leak.lua:2: 2.00 MiB in 2 arrays; (allocated from Go): 512.00 KiB in 1 array; 2 other places"},
		{"fragmented", OOMError{Requested: 16 * mib, HardLimit: 64 * mib, InUse: 32 * mib, LiveBlocks: 4, Cached: 32 * mib, LargestFree: 8 * mib,
			Holders: []Holder{{"frag.lua:3", 32 * mib, 4}}},
			"out of GPU memory: tried to allocate 16.00 MiB; hard limit 64.00 MiB, 32.00 MiB in use by 4 arrays, 32.00 MiB cached\n" +
				"  held by frag.lua:3: 32.00 MiB in 4 arrays\n" +
				"  fragmented: 32.00 MiB is free (32.00 MiB cached, 0 B unreserved) but the largest free block is 8.00 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.e.Error(); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
			if !errors.Is(&c.e, device.ErrOutOfMemory) {
				t.Fatal("errors.Is(OOMError, device.ErrOutOfMemory) is false")
			}
		})
	}
}

// Memory free in total but in pieces too small is named as such: the
// cache's largest block and what the hard limit leaves.
func TestOOMErrorShowsTheLargestFreeBlockWhenFragmented(t *testing.T) {
	src := newFakeSource(gib)
	p := newTestPool(t, src, Config{HardLimit: 64 * mib})
	holesInOneSegment(t, p)
	_, err := p.Alloc(16*mib, 0)
	var oom *OOMError
	if !errors.As(err, &oom) {
		t.Fatalf("Alloc of 16 MiB in 8 MiB holes = %v; want *OOMError", err)
	}
	if oom.Cached != 32*mib || oom.LargestFree != 8*mib || oom.Unreserved != 0 {
		t.Fatalf("OOMError = %+v; want 32 MiB cached, largest free block 8 MiB, 0 unreserved", *oom)
	}
	if want := "fragmented: 32.00 MiB is free (32.00 MiB cached, 0 B unreserved) but the largest free block is 8.00 MiB"; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	// A request larger than all the free memory is not fragmentation.
	_, err = p.Alloc(48*mib, 0)
	if !errors.As(err, &oom) || oom.LargestFree != 0 || strings.Contains(err.Error(), "fragmented") {
		t.Fatalf("Alloc of 48 MiB with 32 MiB free = %v; want an OOMError without fragmentation", err)
	}
}

func TestOOMErrorFromPoolDescribesThePool(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			p := newTestPool(t, src, Config{Strategy: strategy, HardLimit: 64 * mib})
			var live []*Block
			for i := 0; i < 3; i++ {
				b, err := p.Alloc(16*mib, 0)
				if err != nil {
					t.Fatal(err)
				}
				live = append(live, b)
			}
			_, err := p.Alloc(20*mib, 0)
			var oom *OOMError
			if !errors.As(err, &oom) {
				t.Fatalf("Alloc over the hard limit = %v; want *OOMError", err)
			}
			if oom.Requested != 20*mib || oom.HardLimit != 64*mib || oom.InUse != 48*mib || oom.LiveBlocks != 3 || oom.DeviceTotal != gib {
				t.Fatalf("OOMError = %+v", *oom)
			}
			if !strings.HasPrefix(err.Error(), "out of GPU memory: tried to allocate 20.00 MiB; hard limit 64.00 MiB, 48.00 MiB in use by 3 arrays") {
				t.Fatalf("message %q", err)
			}
			st := p.Stats()
			if st.Reserved > 64*mib {
				t.Fatalf("reserved %d passed the hard limit", st.Reserved)
			}
			// Nothing live was touched and the pool still works.
			if err := p.Free(live[0]); err != nil {
				t.Fatal(err)
			}
			b, err := p.Alloc(16*mib, 0)
			if err != nil {
				t.Fatalf("after freeing 16 MiB: %v", err)
			}
			live[0] = b
			for _, b := range live {
				_ = p.Free(b)
			}
		})
	}
}

func TestHardLimitIsNeverPassed(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			const hard = 100 * mib
			p := newTestPool(t, src, Config{Strategy: strategy, HardLimit: hard})
			sizes := []uint64{3 * mib, 700 * kib, 12 * mib, 40 * mib, 5 * kib, 30 * mib, 19 * mib}
			var live []*Block
			for i := 0; i < 60; i++ {
				b, err := p.Alloc(sizes[i%len(sizes)], 0)
				if err == nil {
					live = append(live, b)
				} else if !errors.Is(err, device.ErrOutOfMemory) {
					t.Fatal(err)
				} else if len(live) > 0 {
					_ = p.Free(live[0])
					live = live[1:]
				}
				if st := p.Stats(); st.Reserved > hard || st.PeakReserved > hard {
					t.Fatalf("step %d: reserved %d (peak %d) > hard %d", i, st.Reserved, st.PeakReserved, hard)
				}
			}
		})
	}
}

func TestPressureRungFreesQueuedBlocksAndRetries(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := newFakeSource(gib)
			var p *Pool
			var queued []*Block // what a runtime's cleanups would have queued
			calls := 0
			p = newTestPool(t, src, Config{Strategy: strategy, HardLimit: 96 * mib, Pressure: func() {
				calls++
				for _, b := range queued {
					if err := p.Free(b); err != nil { // must not deadlock: no lock held
						t.Error(err)
					}
				}
				queued = nil
			}})
			for i := 0; i < 4; i++ {
				b, err := p.Alloc(24*mib, 0)
				if err != nil {
					t.Fatal(err)
				}
				queued = append(queued, b)
			}
			b, err := p.Alloc(48*mib, 0)
			if err != nil {
				t.Fatalf("the pressure rung should have made room: %v", err)
			}
			if calls != 1 {
				t.Fatalf("Pressure called %d times, want 1", calls)
			}
			if r := p.Stats().OOMRetries; r == 0 {
				t.Fatal("OOMRetries = 0 after a retry")
			}
			_ = p.Free(b)
		})
	}
}

func TestLadderFailsAfterPressureWithOOMError(t *testing.T) {
	src := newFakeSource(64 * mib)
	calls := 0
	p := newTestPool(t, src, Config{Strategy: StrategyNone, Pressure: func() { calls++ }})
	_, err := p.Alloc(65*mib, 0)
	var oom *OOMError
	if !errors.As(err, &oom) || calls != 1 {
		t.Fatalf("Alloc beyond the device = %v, pressure calls %d", err, calls)
	}
	if oom.HardLimit != 0 || strings.Contains(err.Error(), "hard limit") {
		t.Fatalf("no hard limit set, but the error says %q", err)
	}
}

func TestHugeRequestFailsWithOOMError(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			p := newTestPool(t, newFakeSource(gib), Config{Strategy: strategy})
			for _, n := range []uint64{1<<64 - 1, 1 << 63, 2 * gib} {
				if _, err := p.Alloc(n, 0); !errors.Is(err, device.ErrOutOfMemory) {
					t.Fatalf("Alloc(%d) = %v", n, err)
				}
			}
		})
	}
}
