package prefault

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// fresh is memory no one has written, outside the Go heap where the OS
// allows, so that its pages are surely not there yet.
func fresh(t *testing.T, n int) []byte {
	t.Helper()
	b, release, err := mapAnon(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return b
}

func pages(t *testing.T, b []byte, threads int, stop *atomic.Bool) {
	t.Helper()
	err := Pages(b, threads, stop)
	if errors.Is(err, ErrRefused) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestPagesMakesMemoryResident(t *testing.T) {
	b := fresh(t, 32<<20)
	before, err := resident(b)
	if err != nil {
		t.Skip("no way to see residency here:", err)
	}
	if before > len(b)/10 {
		t.Fatalf("%d of %d bytes resident before any write", before, len(b))
	}
	pages(t, b, 4, nil)
	if after, _ := resident(b); after != len(b) {
		t.Fatalf("%d of %d bytes resident after Pages", after, len(b))
	}
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatal("Pages changed fresh memory, which must stay zero")
	}
}

// Pages must leave what is written, before it and while it runs, as it is.
func TestPagesKeepsContents(t *testing.T) {
	b := fresh(t, 48<<20)
	want := make([]byte, len(b))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(r.Uint32())
	}
	half := len(b) / 2
	copy(b[:half], want[:half])
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the second half is written while the kernel maps it
		defer wg.Done()
		for at := half; at < len(b); at += 1 << 20 {
			copy(b[at:min(at+1<<20, len(b))], want[at:min(at+1<<20, len(b))])
			runtime.Gosched()
		}
	}()
	pages(t, b, 3, nil)
	wg.Wait()
	if !bytes.Equal(b, want) {
		t.Fatal("contents changed under Pages")
	}
}

// A slice that starts and ends inside pages is asked for only in its
// whole pages, so the bytes on either side, someone else's, are untouched.
func TestPagesUnalignedEdges(t *testing.T) {
	b := fresh(t, 8<<20)
	for i := range b {
		b[i] = 0x5a
	}
	inside := b[1000 : len(b)-777]
	pages(t, inside, 2, nil)
	for i, v := range b {
		if v != 0x5a {
			t.Fatalf("byte %d changed to %#x", i, v)
		}
	}
	for _, tiny := range [][]byte{nil, b[5:6], b[10:4000]} {
		if err := Pages(tiny, 2, nil); err != nil {
			t.Fatalf("Pages of %d bytes: %v", len(tiny), err)
		}
	}
}

func TestPagesStops(t *testing.T) {
	b := fresh(t, 64<<20)
	var stop atomic.Bool
	stop.Store(true)
	pages(t, b, 4, &stop)
	if n, err := resident(b); err == nil && n > 0 {
		t.Fatalf("%d bytes made resident after stop was set", n)
	}
}
