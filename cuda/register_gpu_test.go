package cuda_test

import (
	"bytes"
	"testing"

	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/internal/anonmem"
)

// Memory the caller mapped, locked in place by RegisterHost, copies
// asynchronously both ways with its bytes exact; the driver's refusals
// are errors that say why (locked twice, overlapping, not whole pages,
// freed as AllocHost's, unregistered twice), and once unregistered it is
// pageable again.
func TestRegisteredMemoryCopiesAsynchronouslyUntilUnregistered(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	m, err := anonmem.Map(4 << 20)
	if err != nil {
		t.Skipf("no mapped memory here: %v", err)
	}
	defer m.Unmap()
	buf := m.Bytes()
	if err := b.RegisterHost(buf); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{buf, buf[4096 : 8192+4096], buf[1:4097]} {
		if err := b.RegisterHost(bad); err == nil {
			t.Errorf("RegisterHost accepted %d bytes at offset %d of registered memory", len(bad), len(buf)-cap(bad))
		}
	}
	if err := b.FreeHost(buf); err == nil {
		t.Error("FreeHost accepted registered memory")
	}
	s := cudatest.Stream(t, b)
	want := randomBytes(rng, len(buf))
	copy(buf, want)
	p, err := b.Alloc(uint64(len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(p, uint64(len(buf)))
	if err := b.UploadAsync(p, buf, s); err != nil {
		t.Fatal(err)
	}
	if err := b.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	copy(buf, poisoned(len(buf)))
	if err := b.DownloadAsync(buf[4096:], p+4096, s); err != nil {
		t.Fatal(err)
	}
	if err := b.StreamSynchronize(s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf[4096:], want[4096:]) || buf[0] != 0xA5 {
		t.Error("the asynchronous round trip through registered memory differs")
	}
	if err := b.UnregisterHost(buf); err != nil {
		t.Fatal(err)
	}
	if err := b.UnregisterHost(buf); err == nil {
		t.Error("unregistering twice was not an error")
	}
	if err := b.UploadAsync(p, buf, s); err == nil {
		t.Error("UploadAsync accepted memory after it was unregistered")
	}
}
