package cpu

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/internal/anonmem"
)

// backendAndMapping is a CPU backend and 4 MiB of mapped memory, both
// given back when the test ends.
func backendAndMapping(t *testing.T) (*Backend, []byte) {
	t.Helper()
	b, err := New(Config{Capacity: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	m, err := anonmem.Map(4 << 20)
	if err != nil {
		t.Skipf("no mapped memory here: %v", err)
	}
	t.Cleanup(func() { m.Unmap() })
	return b, m.Bytes()
}

// RegisterHost refuses what the cuda backend's refuses, with the same
// reasons: memory locked already or overlapping it (AllocHost's too),
// and ranges that are not whole pages; UnregisterHost refuses what was
// not registered, and after it the memory may be registered again.
func TestRegisterHostRefusesWhatTheDriverRefuses(t *testing.T) {
	b, buf := backendAndMapping(t)
	if err := b.RegisterHost(buf); err != nil {
		t.Fatal(err)
	}
	pinned, err := b.AllocHost(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"the same memory", buf, "overlaps memory that is page-locked already"},
		{"a piece of it", buf[4096 : 3*4096], "overlaps memory that is page-locked already"},
		{"AllocHost's", pinned[:4096], "overlaps memory that is page-locked already"},
		{"a part page", buf[1:4097], "is not whole pages"},
		{"nothing", buf[:0], "is not whole pages"},
	} {
		if err := b.RegisterHost(c.buf); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying it %s", c.name, err, c.want)
		}
	}
	if err := b.FreeHost(buf); err == nil {
		t.Error("FreeHost accepted registered memory")
	}
	if err := b.UnregisterHost(buf[:4096]); err == nil || !strings.Contains(err.Error(), "was not registered with RegisterHost") {
		t.Errorf("unregistering part of a registration: %v", err)
	}
	if err := b.UnregisterHost(buf); err != nil {
		t.Fatal(err)
	}
	if err := b.UnregisterHost(buf); err == nil {
		t.Error("unregistering twice was not an error")
	}
	if err := b.RegisterHost(buf); err != nil {
		t.Errorf("registering again after UnregisterHost: %v", err)
	}
}

// Asynchronous copies take only pinned memory, as the cuda backend's do:
// a range inside one AllocHost buffer or one registration, not pageable
// memory and not a range across two registrations that touch (the
// driver refuses that copy too).
func TestAsynchronousCopiesTakeOnlyOnePinnedRange(t *testing.T) {
	b, buf := backendAndMapping(t)
	half := len(buf) / 2
	for _, r := range [][]byte{buf[:half], buf[half:]} {
		if err := b.RegisterHost(r); err != nil {
			t.Fatal(err)
		}
	}
	pinned, err := b.AllocHost(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Alloc(2 << 20)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		host []byte
		ok   bool
	}{
		{"one registration", buf[half-4096 : half], true},
		{"the other", buf[half : half+4096], true},
		{"AllocHost's", pinned[100:2000], true},
		{"across the seam", buf[half-4096 : half+4096], false},
		{"pageable", make([]byte, 4096), false},
	} {
		up := b.UploadAsync(p, c.host, s)
		down := b.DownloadAsync(c.host, p, s)
		for what, err := range map[string]error{"UploadAsync": up, "DownloadAsync": down} {
			if c.ok && err != nil {
				t.Errorf("%s of %s: %v", what, c.name, err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), "is not pinned memory")) {
				t.Errorf("%s of %s: %v, want a refusal", what, c.name, err)
			}
		}
	}
}
