package cpu

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func TestUploadThenDownloadRoundTripsThroughAView(t *testing.T) {
	b := newTestBackend(t)
	rng := rand.New(rand.NewPCG(3, 4))
	p, _ := b.Alloc(4096)
	want := randomBytes(rng, 1000)
	if err := b.Upload(p+512, want, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1000)
	if err := b.Download(got, p+512, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("downloaded bytes differ from the uploaded ones")
	}
	if !bytes.Equal(b.Bytes(p+512, 1000), want) {
		t.Fatal("Bytes does not show the uploaded data")
	}
}

func TestCopyBetweenAndWithinAllocations(t *testing.T) {
	b := newTestBackend(t)
	rng := rand.New(rand.NewPCG(5, 6))
	src, _ := b.Alloc(1024)
	dst, _ := b.Alloc(1024)
	data := randomBytes(rng, 1024)
	b.Upload(src, data, 0)
	if err := b.Copy(dst+24, src+100, 500, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(dst+24, 500), data[100:600]) {
		t.Fatal("Copy between allocations moved the wrong bytes")
	}
	// Overlapping ranges behave as memmove.
	if err := b.Copy(src+10, src, 1000, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(src+10, 1000), data[:1000]) {
		t.Fatal("overlapping Copy is not a memmove")
	}
}

func TestMemsetFillsExactlyTheRange(t *testing.T) {
	b := newTestBackend(t)
	rng := rand.New(rand.NewPCG(7, 8))
	p, _ := b.Alloc(3000)
	data := randomBytes(rng, 3000)
	for _, v := range []byte{0, 0xab} {
		b.Upload(p, data, 0)
		if err := b.Memset(p+7, v, 2001, 0); err != nil {
			t.Fatal(err)
		}
		got := b.Bytes(p, 3000)
		if !bytes.Equal(got[:7], data[:7]) || !bytes.Equal(got[2008:], data[2008:]) {
			t.Fatalf("Memset(%#x) wrote outside its range", v)
		}
		if !bytes.Equal(got[7:2008], bytes.Repeat([]byte{v}, 2001)) {
			t.Fatalf("Memset(%#x) did not fill its range", v)
		}
	}
}

func TestTransfersOutsideAllocationsAreErrors(t *testing.T) {
	b := newTestBackend(t)
	p, _ := b.Alloc(1000)
	q, _ := b.Alloc(1000)
	s, _ := b.NewStream()
	b.DestroyStream(s)
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"upload past the end", func() error { return b.Upload(p+900, make([]byte, 101), 0) }, "upload: destination of 101 bytes"},
		{"upload to nowhere", func() error { return b.Upload(5, make([]byte, 1), 0) }, "not inside a live allocation"},
		{"download past the end", func() error { return b.Download(make([]byte, 1001), p, 0) }, "download: source"},
		{"copy source too long", func() error { return b.Copy(q, p+1, 1000, 0) }, "copy: source"},
		{"copy destination too long", func() error { return b.Copy(q+1, p, 1000, 0) }, "copy: destination"},
		{"memset spanning allocations", func() error { return b.Memset(p, 1, uint64(q-p)+1, 0) }, "memset: destination"},
		{"destroyed stream", func() error { return b.Upload(p, make([]byte, 1), s) }, "not a live stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if got := b.Bytes(p, 1000); !bytes.Equal(got, make([]byte, 1000)) {
		t.Fatal("a rejected transfer changed memory")
	}
}
