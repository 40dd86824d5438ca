package cuda_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

const hostWordKernel = `extern "C" __global__ void put(unsigned long long* out, unsigned long long v) { out[0] = v; }`

// A kernel writes each host word directly and ReadHostWord returns what
// it wrote once the stream has caught up; words are reused after they are
// read, run out with an error that says so, and are refused on a stream
// that records a graph. A backend closed with its page frees it.
func TestHostWordsCarryKernelResults(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	rng := newRand(t)
	put, err := b.Launcher(hostWordKernel, "put.cu", nil, "put")
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer b.DestroyStream(s)
	one := func(v uint64) uint64 {
		t.Helper()
		slot, dev, err := b.TakeHostWord(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := put([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, dev, v); err != nil {
			b.ReleaseHostWord(slot)
			t.Fatal(err)
		}
		got, err := b.ReadHostWord(slot, s)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for range 2000 { // more calls than words: each is given back
		if v := rng.Uint64(); one(v) != v {
			t.Fatalf("a kernel wrote %#x, the host read another word", v)
		}
	}

	// Every word taken at once, each written by its own kernel.
	type taken struct {
		slot int
		v    uint64
	}
	var all []taken
	seen := map[device.Ptr]bool{}
	for {
		slot, dev, err := b.TakeHostWord(s)
		if err != nil {
			if !strings.Contains(err.Error(), "host words are taken") {
				t.Errorf("running out of host words: %v", err)
			}
			break
		}
		if seen[dev] || dev%8 != 0 {
			t.Fatalf("host word %d at %#x: given twice or misaligned", slot, dev)
		}
		seen[dev] = true
		v := rng.Uint64()
		if err := put([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, dev, v); err != nil {
			t.Fatal(err)
		}
		all = append(all, taken{slot, v})
	}
	if len(all) < 64 {
		t.Fatalf("only %d host words", len(all))
	}
	for _, w := range all {
		if got, err := b.ReadHostWord(w.slot, s); err != nil || got != w.v {
			t.Fatalf("word %d: %#x, %v; want %#x", w.slot, got, err, w.v)
		}
	}

	if err := b.BeginCapture(s); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.TakeHostWord(s)
	scratch, aerr := b.Alloc(8)
	if aerr != nil {
		t.Fatal(aerr)
	}
	defer b.Free(scratch, 8)
	if err := put([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, scratch, uint64(1)); err != nil {
		t.Fatal(err)
	}
	var ce *device.CaptureError
	if !errors.As(err, &ce) {
		t.Errorf("TakeHostWord while the stream records a graph: %v", err)
	}
	g, _, err := b.EndCapture(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DestroyGraph(g); err != nil {
		t.Fatal(err)
	}
	if v := rng.Uint64(); one(v) != v {
		t.Fatal("after a capture, a host word read back wrong")
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close with a page of host words: %v", err)
	}
	if _, _, err := b.TakeHostWord(s); err == nil {
		t.Error("a closed backend gave a host word")
	}
}
