package cuda_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Logf("random seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x63756461))
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func poisoned(n int) []byte { return bytes.Repeat([]byte{0xA5}, n) }

func TestUploadDownloadAndCopyRoundTripRandomBytes(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	for _, stream := range []device.Stream{0, s} {
		for _, n := range []int{1, 3, 255, 4096, 1<<20 + 3} {
			data := randomBytes(rng, n)
			p, err := b.Alloc(uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			q, err := b.Alloc(uint64(n))
			if err != nil {
				t.Fatal(err)
			}
			if p%256 != 0 || q%256 != 0 {
				t.Errorf("allocations %#x, %#x are not 256-byte aligned", p, q)
			}
			want := append([]byte(nil), data...)
			if err := b.Upload(p, data, stream); err != nil {
				t.Fatal(err)
			}
			// Upload returns when the source may be reused: scribbling
			// on it now must not reach the device.
			for i := range data {
				data[i] = ^data[i]
			}
			if err := b.Copy(q, p, uint64(n), stream); err != nil {
				t.Fatal(err)
			}
			got := poisoned(n)
			if err := b.Download(got, q, stream); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("stream %#x, %d bytes: round trip through Copy differs", stream, n)
			}
			b.Free(p, uint64(n))
			b.Free(q, uint64(n))
		}
	}
}

// An upload on stream 0 is on the device when Upload returns: a copy on
// another stream, which does not wait for stream 0, reads the new bytes.
// The driver's synchronous copy from pageable memory returns once the
// source is staged, and used to leave the transfer of its last pieces in
// flight; a copy of the tail on another stream then read the bytes before.
func TestUploadOnStreamZeroIsThereForEveryStream(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	const n, tail = 64 << 20, 1 << 20
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	q, err := b.Alloc(tail)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(q, tail)
	data := randomBytes(rng, n)
	for round := range 10 {
		flip := byte(rng.Uint32()) | 1 // each round's bytes differ from the last's
		for i := range data {
			data[i] ^= flip
		}
		if err := b.Upload(p, data, 0); err != nil {
			t.Fatal(err)
		}
		if err := b.Copy(q, p+n-tail, tail, s); err != nil {
			t.Fatal(err)
		}
		got := poisoned(tail)
		if err := b.Download(got, q, s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[n-tail:]) {
			t.Fatalf("round %d: a copy on another stream read the tail of the upload before it landed", round)
		}
	}
}

func TestPartialRangesCopyAtByteOffsets(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	const n = 10000
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	data := randomBytes(rng, n)
	if err := b.Upload(p, data, 0); err != nil {
		t.Fatal(err)
	}
	// Copy [3, 5003) to [101, 5101): the ranges do not overlap.
	if err := b.Copy(p+101, p+3, 5000, 0); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), data...)
	copy(want[101:5101], data[3:5003])
	got := poisoned(n)
	if err := b.Download(got, p, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("copy between byte offsets wrote the wrong bytes")
	}
	got = poisoned(7)
	if err := b.Download(got, p+9000, 0); err != nil || !bytes.Equal(got, want[9000:9007]) {
		t.Errorf("download at an odd offset: %v", err)
	}
}

func TestMemsetSetsExactlyTheRange(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	const n = 1 << 16
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	data := randomBytes(rng, n)
	b.Upload(p, data, s)
	lo, hi := 1+rng.IntN(1000), n-1-rng.IntN(1000)
	v := byte(rng.Uint32())
	if err := b.Memset(p+device.Ptr(lo), v, uint64(hi-lo), s); err != nil {
		t.Fatal(err)
	}
	got := poisoned(n)
	if err := b.Download(got, p, s); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), data...)
	for i := lo; i < hi; i++ {
		want[i] = v
	}
	if !bytes.Equal(got, want) {
		t.Errorf("memset of [%d,%d) to %#x: wrong bytes", lo, hi, v)
	}
}

// Pinned buffers copy asynchronously both ways, whether mapped memory
// page-locked in place (where Linux and the driver allow, which they do
// on the GPU machines glua is tested on) or cuMemHostAlloc's.
func TestPinnedBuffersCopyAsynchronously(t *testing.T) {
	b := cudatest.Shared(t)
	for _, registered := range []bool{true, false} {
		name := map[bool]string{true: "mapped", false: "cuMemHostAlloc"}[registered]
		t.Run(name, func(t *testing.T) {
			defer cuda.RegisterHostMemory(registered)()
			pinnedRoundTrip(t, b, registered && goruntime.GOOS == "linux")
		})
	}
}

func pinnedRoundTrip(t *testing.T, b *cuda.Backend, registered bool) {
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	const n = 8<<20 + 5
	up, err := b.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	down, err := b.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, buf := range [][]byte{up, down} {
		if got := b.MappedHost(buf); got != registered {
			t.Errorf("a buffer of %d bytes: mapped and page-locked in place %t, want %t", n, got, registered)
		}
		if i := bytes.IndexFunc(buf, func(r rune) bool { return r != 0 }); i >= 0 {
			t.Errorf("a new pinned buffer holds a byte other than zero at %d", i)
		}
	}
	copy(up, randomBytes(rng, n))
	copy(down, poisoned(n))
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, n)
	if err := b.UploadAsync(p, up, s); err != nil {
		t.Fatal(err)
	}
	if err := b.DownloadAsync(down[1:], p+1, s); err != nil { // sub-slices of pinned buffers are pinned too
		t.Fatal(err)
	}
	e, _ := b.NewEvent()
	defer b.DestroyEvent(e)
	b.Record(e, s)
	if err := b.EventSynchronize(e); err != nil {
		t.Fatal(err)
	}
	if down[0] != 0xA5 || !bytes.Equal(down[1:], up[1:]) {
		t.Error("asynchronous round trip differs")
	}
	pageable := make([]byte, 64)
	if err := b.UploadAsync(p, pageable, s); err == nil {
		t.Error("UploadAsync accepted pageable memory")
	}
	if err := b.DownloadAsync(pageable, p, s); err == nil {
		t.Error("DownloadAsync accepted pageable memory")
	}
	if err := b.FreeHost(up); err != nil {
		t.Fatal(err)
	}
	if err := b.FreeHost(up); err == nil {
		t.Error("freeing a pinned buffer twice was not an error")
	}
	if err := b.FreeHost(pageable); err == nil {
		t.Error("FreeHost accepted memory AllocHost did not return")
	}
	if err := b.FreeHost(down); err != nil {
		t.Fatal(err)
	}
}

func TestStreamOrderedPoolAllocatesAndTrims(t *testing.T) {
	b := cudatest.Shared(t)
	if !b.AsyncSupported() {
		t.Skip("this device has no stream-ordered memory pool")
	}
	rng := newRand(t)
	s := cudatest.Stream(t, b)
	if err := b.SetReleaseThreshold(64 << 20); err != nil {
		t.Fatal(err)
	}
	const n = 3<<20 + 1
	p, err := b.AllocAsync(n, s)
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(rng, n)
	if err := b.Upload(p, data, s); err != nil {
		t.Fatal(err)
	}
	got := poisoned(n)
	if err := b.Download(got, p, s); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("round trip through pool memory: %v", err)
	}
	if held, err := b.PoolReserved(); err != nil || held < n {
		t.Fatalf("PoolReserved with a live %d-byte block = %d, %v", n, held, err)
	}
	if err := b.FreeAsync(p, s); err != nil {
		t.Fatal(err)
	}
	if err := b.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	if held, err := b.PoolReserved(); err != nil || held < n {
		t.Fatalf("PoolReserved with the block cached (threshold 64 MiB) = %d, %v", held, err)
	}
	if err := b.TrimTo(0); err != nil {
		t.Fatal(err)
	}
	if held, err := b.PoolReserved(); err != nil || held != 0 {
		t.Fatalf("PoolReserved after TrimTo(0) = %d, %v", held, err)
	}
	_, total, _ := b.MemInfo()
	if _, err := b.AllocAsync(4*total, s); !errors.Is(err, device.ErrOutOfMemory) {
		t.Errorf("a pool allocation beyond the device = %v, want ErrOutOfMemory", err)
	}
	if err := b.SetReleaseThreshold(0); err != nil {
		t.Fatal(err)
	}
}
