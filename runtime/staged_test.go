package runtime_test

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/gluaproject/glua/cpu"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Uploads of pageable arrays large enough to go through a Stager
// (ToDevice, CopyFrom), and downloads into them (CopyToHost), land
// exactly, and leave no pinned memory in use: the slots wait in the pinned
// cache for the next copy.
func TestLargePageableCopiesLandExactly(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		liveBefore, _, _ := rt.PinnedStats()
		for _, n := range []int{1<<20 - 1, 5<<20 + 3} {
			h, err := rt.NewHostArray([]int{n}, runtime.Float32, false)
			if err != nil {
				t.Fatal(err)
			}
			fillRandom(h.Bytes())
			a, err := rt.ToDevice(h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := a.CopyToHost(nil)
			if err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
				t.Fatalf("ToDevice of %d elements: %v", n, err)
			}
			fillRandom(h.Bytes())
			if err := a.CopyFrom(h); err != nil {
				t.Fatal(err)
			}
			if got, err = a.CopyToHost(nil); err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
				t.Fatalf("CopyFrom of %d elements: %v", n, err)
			}
			// into an existing array whose bytes all differ from the device's
			want := bytes.Clone(h.Bytes())
			for i := range h.Bytes() {
				h.Bytes()[i] = ^want[i]
			}
			if _, err := a.CopyToHost(h); err != nil || !bytes.Equal(h.Bytes(), want) {
				t.Fatalf("CopyToHost into an existing array of %d elements: %v", n, err)
			}
		}
		if live, _, _ := rt.PinnedStats(); live != liveBefore {
			t.Errorf("pinned bytes live after the uploads: %d, want %d", live, liveBefore)
		}
	})
}

// pinnedCPU is the CPU backend with page-locked memory that is ordinary
// memory, as the cuda backend's is to Go, so that the runtime takes the
// paths it takes on a GPU; it counts the two kinds of upload and of
// download.
type pinnedCPU struct {
	*cpu.Backend
	uploads, asyncUploads     atomic.Int64
	downloads, asyncDownloads atomic.Int64
	// gate, when set before the runtime's first copy, holds every
	// asynchronous upload until it is closed.
	gate chan struct{}
}

func (p *pinnedCPU) Upload(dst device.Ptr, src []byte, s device.Stream) error {
	p.uploads.Add(1)
	return p.Backend.Upload(dst, src, s)
}

func (p *pinnedCPU) UploadAsync(dst device.Ptr, src []byte, s device.Stream) error {
	p.asyncUploads.Add(1)
	if p.gate != nil {
		<-p.gate
	}
	return p.Backend.UploadAsync(dst, src, s)
}

func (p *pinnedCPU) Download(dst []byte, src device.Ptr, s device.Stream) error {
	p.downloads.Add(1)
	return p.Backend.Download(dst, src, s)
}

func (p *pinnedCPU) DownloadAsync(dst []byte, src device.Ptr, s device.Stream) error {
	p.asyncDownloads.Add(1)
	return p.Backend.DownloadAsync(dst, src, s)
}

func newPinnedCPU(t *testing.T, opts runtime.Options) (*runtime.Runtime, *pinnedCPU) {
	var b *pinnedCPU
	restore := runtime.WrapBackend(func(cb runtime.Backend) runtime.Backend {
		b = &pinnedCPU{Backend: cb.(*cpu.Backend)}
		return b
	})
	defer restore()
	return newCPU(t, opts), b
}

// With page-locked memory to stage through, a large pageable upload or
// download goes through a Stager's slots, which then wait in the pinned
// cache; a small one, and one that finds no pinned memory to spare under
// the limit, use the backend's own copy. The data lands exactly either way.
func TestLargePageableCopiesStageWhenPinnedMemoryAllows(t *testing.T) {
	for _, tc := range []struct {
		limit  string
		n      int
		staged bool
	}{
		{"64MiB", 5<<20 + 3, true},
		{"64MiB", 1 << 20, false},
		{"1MiB", 5<<20 + 3, false},
	} {
		rt, b := newPinnedCPU(t, runtime.Options{PinnedLimit: tc.limit})
		h, err := rt.NewHostArray([]int{tc.n}, runtime.Uint8, false)
		if err != nil {
			t.Fatal(err)
		}
		fillRandom(h.Bytes())
		a, err := rt.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		staged := b.asyncUploads.Load() > 0
		if staged != tc.staged || staged == (b.uploads.Load() > 0) {
			t.Errorf("%d bytes under %s: %d staged pieces and %d plain uploads, want staged %v",
				tc.n, tc.limit, b.asyncUploads.Load(), b.uploads.Load(), tc.staged)
		}
		got, err := a.CopyToHost(nil)
		if err != nil || !bytes.Equal(got.Bytes(), h.Bytes()) {
			t.Errorf("%d bytes under %s: the device's copy differs (%v)", tc.n, tc.limit, err)
		}
		staged = b.asyncDownloads.Load() > 0
		if staged != tc.staged || staged == (b.downloads.Load() > 0) {
			t.Errorf("%d bytes under %s: %d staged pieces and %d plain downloads, want staged %v",
				tc.n, tc.limit, b.asyncDownloads.Load(), b.downloads.Load(), tc.staged)
		}
		live, cached, _ := rt.PinnedStats()
		if live != 0 || (cached > 0) != tc.staged {
			t.Errorf("%d bytes under %s: %d pinned bytes live and %d cached after the upload", tc.n, tc.limit, live, cached)
		}
	}
}
