package runtime_test

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// FuzzRuntimeSurvivesAnySequence drives a runtime with a random sequence of
// device and host allocations (some far larger than the machine), frees,
// drops, collections, kernels, limits and, at a random point, Close. No
// step may panic; an array never freed keeps its value; after Close every
// call returns ErrClosed.
func FuzzRuntimeSurvivesAnySequence(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 0, 0, 5, 5, 9, 0, 1, 3})
	f.Add([]byte{2, 2, 2, 6, 7, 1, 1, 8, 4, 4, 9, 0})
	f.Add([]byte{3, 250, 3, 251, 0, 6, 6, 2, 9, 3})
	f.Fuzz(func(t *testing.T, ops []byte) {
		// The Lua memory limit, which would default to the host limit,
		// looks at the whole process's heap (docs/lua-api.md), where
		// the package's other tests leave tens of MiB for the collector;
		// what is fuzzed here is the pool and the host limit.
		rt, err := runtime.New(cpuOptions(runtime.Options{HostMemoryLimit: "32MiB", LuaMemoryLimit: "1GiB"}, "64MiB"))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		type kept struct {
			a *runtime.Array
			v float64
		}
		var live []kept
		var hosts []*runtime.HostArray
		closed := false
		for i, op := range ops {
			arg := 0
			if i+1 < len(ops) {
				arg = int(ops[i+1])
			}
			if closed {
				if _, err := rt.Zeros([]int{4}, device.Float32); !errors.Is(err, runtime.ErrClosed) {
					t.Fatalf("step %d: Zeros after Close: %v", i, err)
				}
				if _, err := rt.NewHostArray([]int{4}, device.Float32, arg%2 == 0); !errors.Is(err, runtime.ErrClosed) {
					t.Fatalf("step %d: NewHostArray after Close: %v", i, err)
				}
				if err := rt.DoString("x = 1"); !errors.Is(err, runtime.ErrClosed) {
					t.Fatalf("step %d: DoString after Close: %v", i, err)
				}
				continue
			}
			switch op % 10 {
			case 0: // a device array of up to 4 MiB, filled with a value
				n := 1 + arg*4096
				a, err := rt.Full([]int{n}, float64(i+1), device.Float32)
				if err != nil {
					if !errors.Is(err, device.ErrOutOfMemory) {
						t.Fatalf("step %d: Full: %v", i, err)
					}
					continue
				}
				live = append(live, kept{a, float64(i + 1)})
			case 1: // free one
				if len(live) > 0 {
					k := arg % len(live)
					if err := live[k].a.Free(); err != nil {
						t.Fatalf("step %d: Free: %v", i, err)
					}
					live = append(live[:k], live[k+1:]...)
				}
			case 2: // drop one: the collector's to find
				if len(live) > 0 {
					live = live[:len(live)-1]
				}
			case 3: // a host array: small, near the limit, or past the machine
				shape := []int{1 + arg*1024}
				if arg >= 250 {
					shape = []int{1 << 20, 1 << 20, arg}
				}
				h, err := rt.NewHostArray(shape, device.Float32, arg%2 == 0)
				if err != nil {
					if !errors.Is(err, device.ErrOutOfMemory) {
						t.Fatalf("step %d: NewHostArray: %v", i, err)
					}
					continue
				}
				hosts = append(hosts, h)
			case 4: // drop host arrays
				hosts = hosts[:len(hosts)/2]
			case 5: // a kernel on a live array, checked
				if len(live) > 0 {
					k := live[arg%len(live)]
					if err := rt.Scale(k.a, 1); err != nil {
						t.Fatalf("step %d: Scale: %v", i, err)
					}
				}
			case 6: // collect from Lua
				if err := rt.DoString("collectgarbage()"); err != nil {
					t.Fatalf("step %d: collectgarbage: %v", i, err)
				}
			case 7: // change the hard limit, which may be refused
				limit := runtime.LimitChange{Set: true, Value: []string{"none", "8MiB", "32MiB", "0", "1TiB"}[arg%5]}
				_ = rt.SetLimits(runtime.LimitChange{}, limit)
			case 8: // download into a new host array
				if len(live) > 0 {
					k := live[arg%len(live)]
					if _, err := k.a.CopyToHost(nil); err != nil && !errors.Is(err, device.ErrOutOfMemory) {
						t.Fatalf("step %d: CopyToHost: %v", i, err)
					}
				}
			case 9: // Close, at any point
				if err := rt.Close(); err != nil {
					t.Fatalf("step %d: Close: %v", i, err)
				}
				closed, live, hosts = true, nil, nil
			}
			for _, k := range live { // every kept array keeps its value
				if s, err := rt.Sum(k.a); err != nil || s != k.v*float64(k.a.Size()) {
					t.Fatalf("step %d: a kept array sums to %v (%v), want %v", i, s, err, k.v*float64(k.a.Size()))
				}
			}
		}
	})
}
