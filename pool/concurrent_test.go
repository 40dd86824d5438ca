package pool

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gluaproject/glua/device"
)

// TestManyGoroutinesShareOnePool runs several "runtimes" at once, some on
// the pool itself and some on quota views, each with a Pressure hook that
// frees from its own goroutine's queue, as runtime cleanups would. Run it
// with -race.
func TestManyGoroutinesShareOnePool(t *testing.T) {
	for _, strategy := range strategiesOverFake {
		t.Run(strategy, func(t *testing.T) {
			src := &syncSource{eventSource: newEventSource(512 * mib)}
			p := newTestPool(t, src, Config{Strategy: strategy, HardLimit: 448 * mib, SoftLimit: 256 * mib})
			const workers = 8
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					errs <- runWorker(p, w)
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			mustCheck(t, p)
			st := p.Stats()
			if st.LiveBlocks != 0 || st.Used != 0 {
				t.Fatalf("after every worker freed its blocks: %+v", st)
			}
			if _, err := p.Reclaim(0); err != nil {
				t.Fatal(err)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if n, _ := src.outstanding(); n != 0 {
				t.Fatalf("source lends %d after Close", n)
			}
			checkSourceClean(t, src.fakeSource)
		})
	}
}

func runWorker(root *Pool, w int) error {
	rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(w)))
	var p Allocator = root
	var mu sync.Mutex // guards queue: Pressure runs on this goroutine, but say so
	var queue []*Block
	pressure := func() {
		mu.Lock()
		q := queue
		queue = nil
		mu.Unlock()
		for _, b := range q {
			_ = p.Free(b)
		}
	}
	if w%2 == 1 {
		v, err := root.Quota(Config{HardLimit: 96 * mib, Pressure: pressure})
		if err != nil {
			return err
		}
		p = v
	}
	stream := device.Stream(w % 3)
	var live []*Block
	for i := 0; i < 300; i++ {
		switch r := rng.IntN(10); {
		case r < 5:
			n := []uint64{rng.Uint64N(64 * kib), rng.Uint64N(4 * mib), rng.Uint64N(32 * mib)}[rng.IntN(3)]
			b, err := p.Alloc(n, stream)
			if err != nil {
				if errors.Is(err, device.ErrOutOfMemory) {
					continue
				}
				return err
			}
			if rng.IntN(3) == 0 {
				mu.Lock()
				queue = append(queue, b)
				mu.Unlock()
			} else {
				live = append(live, b)
			}
		case r < 8 && len(live) > 0:
			j := rng.IntN(len(live))
			if err := p.Free(live[j]); err != nil {
				return err
			}
			live = append(live[:j], live[j+1:]...)
		case r == 8 && len(live) > 0:
			p.RecordStream(live[rng.IntN(len(live))], device.Stream(rng.IntN(3)))
		default:
			p.Synchronized()
			_ = p.Stats()
		}
	}
	pressure()
	for _, b := range live {
		if err := p.Free(b); err != nil {
			return err
		}
	}
	if p != root {
		return p.Close()
	}
	return nil
}
