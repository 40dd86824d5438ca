package cpu

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

const testCapacity = 64 << 20

func newTestBackend(t testing.TB) *Backend {
	t.Helper()
	b, err := New(Config{Capacity: testCapacity, Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero capacity", Config{}, "Capacity"},
		{"negative threads", Config{Capacity: 1 << 20, Threads: -2}, "Threads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
			}
		})
	}
}

func TestInfoDescribesThreadsAndMemory(t *testing.T) {
	b := newTestBackend(t)
	if _, err := b.Alloc(1 << 20); err != nil {
		t.Fatal(err)
	}
	info, err := b.Info()
	if err != nil {
		t.Fatal(err)
	}
	want := device.Info{Name: "CPU (3 threads)", TotalMemory: testCapacity, FreeMemory: testCapacity - 1<<20, Multiprocessors: 3}
	if info != want {
		t.Fatalf("Info() = %+v, want %+v", info, want)
	}
	if b.Name() != "cpu" {
		t.Fatalf("Name() = %q, want cpu", b.Name())
	}
}

func TestZeroThreadsMeansGOMAXPROCS(t *testing.T) {
	b, err := New(Config{Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := b.Info()
	if info.Multiprocessors < 1 || !strings.HasPrefix(info.Name, "CPU (") {
		t.Fatalf("Info() = %+v, want at least one thread", info)
	}
}

func TestCallsAfterCloseFailButCloseTwiceIsHarmless(t *testing.T) {
	b := newTestBackend(t)
	p, err := b.Alloc(512)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := b.Alloc(512); err == nil {
		t.Error("Alloc after Close succeeded")
	}
	if err := b.Upload(p, make([]byte, 8), 0); err == nil {
		t.Error("Upload after Close succeeded")
	}
	if _, _, err := b.MemInfo(); err == nil {
		t.Error("MemInfo after Close succeeded")
	}
}
