package pool

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/device"
)

// fuzzReader doles out the fuzz input; past its end it reads zeros.
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *fuzzReader) more() bool { return r.pos < len(r.data) }

// size draws an allocation size spread over every size class the caching
// strategy distinguishes.
func (r *fuzzReader) size() uint64 {
	class, lo, hi := r.byte(), uint64(r.byte()), uint64(r.byte())
	v := lo | hi<<8
	switch class % 5 {
	case 0:
		return v % 4096 // bytes, 0 included
	case 1:
		return (v%1024 + 1) * kib // up to 1 MiB: small
	case 2:
		return smallMax + v*150 // just above small
	case 3:
		return (v%10 + 1) * mib
	default:
		return (v%48 + 10) * mib // own segments
	}
}

// FuzzPool runs a sequence of pool operations decoded from the input and
// checks the pool's invariants after every one.
func FuzzPool(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 3, 1, 5, 0})
	f.Add([]byte{1, 1, 0, 3, 200, 1, 1, 0, 4, 9, 0, 2, 8, 3, 0, 3, 1})
	f.Add([]byte{2, 2, 0, 4, 50, 0, 2, 0, 4, 9, 0, 1, 6, 20, 5, 7, 1, 7, 3, 3, 0, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		runPoolProgram(t, data)
	})
}

const fuzzStreams = 3

func runPoolProgram(t *testing.T, data []byte) {
	r := &fuzzReader{data: data}
	mode := r.byte()
	strategy := []string{StrategyCaching, StrategyNone, StrategyCUDA}[mode%3]
	base := newEventSource(256 * mib)
	var src Source
	switch kind := (mode / 3) % 3; {
	case strategy == StrategyCUDA && kind == 2:
		src = syncAsyncSource{newAsyncSourceOver(base)}
	case strategy == StrategyCUDA:
		src = newAsyncSourceOver(base)
	case kind == 0:
		src = base.fakeSource
	case kind == 1:
		src = base
	default:
		src = &syncSource{eventSource: base}
	}
	_, hasEvents := src.(EventSource)

	var live, freed, garbage []*Block
	var drop func(*Block)
	drop = func(b *Block) {
		for i, x := range live {
			if x == b {
				live = append(live[:i], live[i+1:]...)
				break
			}
		}
		for i, x := range garbage {
			if x == b {
				garbage = append(garbage[:i], garbage[i+1:]...)
				break
			}
		}
		freed = append(freed, b)
	}

	var p *Pool
	p = newTestPool(t, src, Config{Strategy: strategy, Pressure: func() {
		// What a runtime's cleanups would have queued.
		for _, b := range append([]*Block(nil), garbage...) {
			if err := p.Free(b); err != nil {
				t.Errorf("Free from Pressure: %v", err)
			}
			drop(b)
		}
	}})
	for step := 0; r.more() && step < 400; step++ {
		before := p.Stats()
		op := r.byte() % 10
		switch op {
		case 0, 1, 2:
			n, s := r.size(), device.Stream(r.byte()%fuzzStreams)
			b, err := p.Alloc(n, s)
			if err != nil {
				if !errors.Is(err, device.ErrOutOfMemory) {
					t.Fatalf("step %d: Alloc(%d): %v", step, n, err)
				}
				break
			}
			if b.Size != n || b.Stream != s {
				t.Fatalf("step %d: Alloc(%d, %d) gave %+v", step, n, s, b)
			}
			live = append(live, b)
			base.work(s) // the program uses the block on its stream
			if r.byte()%4 == 0 {
				garbage = append(garbage, b)
			}
		case 3, 4:
			if len(live) == 0 {
				break
			}
			b := live[int(r.byte())%len(live)]
			if err := p.Free(b); err != nil {
				t.Fatalf("step %d: Free: %v", step, err)
			}
			drop(b)
		case 5:
			if len(freed) == 0 {
				break
			}
			if err := p.Free(freed[int(r.byte())%len(freed)]); err != nil {
				t.Fatalf("step %d: second Free: %v", step, err)
			}
		case 6:
			n := uint64(r.byte()%8) * 8 * mib
			released, err := p.Reclaim(n)
			if err != nil {
				t.Fatalf("step %d: Reclaim: %v", step, err)
			}
			if after := p.Stats().Reserved; before.Reserved-after != released {
				t.Fatalf("step %d: Reclaim says %d released, reserved fell by %d", step, released, before.Reserved-after)
			}
		case 7:
			soft, hard := uint64(r.byte()%16)*16*mib, uint64(r.byte()%16)*32*mib
			err := p.SetLimits(soft, hard)
			if hard > 0 && soft > hard {
				if err == nil {
					t.Fatalf("step %d: SetLimits(%d, %d) accepted soft above hard", step, soft, hard)
				}
				break
			}
			if st := p.Stats(); (err == nil) == (hard > 0 && st.Reserved > hard) {
				t.Fatalf("step %d: SetLimits(%d, %d) = %v with %d reserved", step, soft, hard, err, st.Reserved)
			}
		case 8:
			if len(live) > 0 {
				s := device.Stream(r.byte() % fuzzStreams)
				p.RecordStream(live[int(r.byte())%len(live)], s)
				base.work(s)
			}
		case 9:
			if hasEvents {
				base.finish(device.Stream(r.byte() % fuzzStreams))
			}
			p.Synchronized()
		}
		checkPoolStep(t, step, p, base.fakeSource, live, before)
	}

	// Sometimes the pool closes with blocks still live, as a runtime does:
	// every byte goes back, and what comes after is an error, never a
	// panic.
	if mode/9%4 == 0 {
		for s := device.Stream(0); s < fuzzStreams; s++ {
			base.finish(s)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("Close with %d live blocks: %v", len(live), err)
		}
		if _, err := p.Alloc(mib, 0); err == nil {
			t.Fatal("Alloc after Close succeeded")
		}
		for _, b := range live {
			_ = p.Free(b) // does nothing; must not panic
		}
		if err := p.SetLimits(0, mib); err == nil {
			t.Fatal("SetLimits after Close succeeded")
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		checkSourceClean(t, base.fakeSource)
		return
	}

	// Free everything, let the device finish, reclaim: every byte is back.
	for _, b := range append([]*Block(nil), live...) {
		if err := p.Free(b); err != nil {
			t.Fatalf("final Free: %v", err)
		}
	}
	for s := device.Stream(0); s < fuzzStreams; s++ {
		base.finish(s)
	}
	if _, err := p.Reclaim(0); err != nil {
		t.Fatalf("final Reclaim: %v", err)
	}
	st := p.Stats()
	if n, nbytes := base.outstanding(); st.Reserved != 0 || st.Used != 0 || st.LiveBlocks != 0 || n != 0 {
		t.Fatalf("after freeing and reclaiming everything: reserved %d, used %d, live %d; source lends %d bytes in %d", st.Reserved, st.Used, st.LiveBlocks, nbytes, n)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := base.liveEvents(); n != 0 {
		t.Fatalf("%d events left after Close", n)
	}
	checkSourceClean(t, base.fakeSource)
}

func checkPoolStep(t *testing.T, step int, p *Pool, src *fakeSource, live []*Block, before Stats) {
	t.Helper()
	if err := checkInvariants(p); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	if err := liveOverlap(live); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	st := p.Stats()
	var asked uint64
	for _, b := range live {
		asked += b.Size
	}
	if st.Requested != asked || st.LiveBlocks != len(live) || st.Used < st.Requested || st.Reserved < st.Used {
		t.Fatalf("step %d: stats %+v; live blocks ask %d in %d", step, st, asked, len(live))
	}
	// The hard limit binds every allocation: reserved may sit above it only
	// when the limit was lowered under it, never grow past it.
	if st.HardLimit > 0 && st.Reserved > st.HardLimit && st.Reserved > before.Reserved {
		t.Fatalf("step %d: reserved grew from %d to %d, above the hard limit %d", step, before.Reserved, st.Reserved, st.HardLimit)
	}
	if _, nbytes := src.outstanding(); nbytes != st.Reserved {
		t.Fatalf("step %d: reserved %d but the source lends %d", step, st.Reserved, nbytes)
	}
	if v := src.problems(); len(v) > 0 {
		t.Fatalf("step %d: source: %v", step, v)
	}
}
