package runtime_test

import (
	"errors"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// Close is idempotent, and every method that can fail says afterwards that
// the runtime is closed: no panic, no nil dereference inside gopher-lua.
func TestEveryMethodAfterCloseSaysTheRuntimeIsClosed(t *testing.T) {
	rt, err := runtime.New(cpuOptions(runtime.Options{}, "64MiB"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := rt.Zeros([]int{4}, device.Float32)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := rt.Zeros([]int{4}, device.Float32)
	h, _ := rt.NewHostArray([]int{4}, device.Float32, false)
	m, _ := rt.Zeros([]int{2, 2}, device.Float32)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	calls := map[string]func() error{
		"DoString":    func() error { return rt.DoString("x = 1") },
		"DoFile":      func() error { return rt.DoFile("testdata/none.lua") },
		"DeviceArray": func() error { _, err := rt.DeviceArray([]int{4}, device.Float32); return err },
		"Zeros":       func() error { _, err := rt.Zeros([]int{4}, device.Float32); return err },
		"Full":        func() error { _, err := rt.Full([]int{4}, 1, device.Float32); return err },
		"Rand":        func() error { _, err := rt.Rand([]int{4}, device.Float32, nil); return err },
		"RandN":       func() error { _, err := rt.RandN([]int{4}, device.Float32, nil); return err },
		"Arith": func() error {
			_, err := rt.Arith(runtime.OpAdd, runtime.Operand{Array: x}, runtime.Operand{Number: 1})
			return err
		},
		"Neg": func() error { _, err := rt.Neg(x); return err },
		"HostArith": func() error {
			_, err := rt.HostArith(runtime.OpAdd, runtime.HostOperand{Array: h}, runtime.HostOperand{Number: 1})
			return err
		},
		"ToDevice": func() error { _, err := rt.ToDevice(h); return err },
		"NewHostArray": func() error {
			_, err := rt.NewHostArray([]int{4}, device.Float32, false)
			return err
		},
		"Fill":        func() error { return rt.Fill(x, 1) },
		"Scale":       func() error { return rt.Scale(x, 2) },
		"Copy":        func() error { return rt.Copy(x, y) },
		"Axpy":        func() error { return rt.Axpy(y, 2, x) },
		"Add":         func() error { return rt.Add(y, x) },
		"Mul":         func() error { return rt.Mul(y, x) },
		"Sum":         func() error { _, err := rt.Sum(x); return err },
		"Norm":        func() error { _, err := rt.Norm(x); return err },
		"MaxAbsDiff":  func() error { _, err := rt.MaxAbsDiff(x, y); return err },
		"Matmul":      func() error { return rt.Matmul(m, m, m, runtime.MatmulOptions{}) },
		"SetLimits":   func() error { return rt.SetLimits(runtime.LimitChange{}, runtime.LimitChange{}) },
		"Reclaim":     func() error { _, err := rt.Reclaim(0); return err },
		"Synchronize": func() error { return rt.Synchronize() },
		"Scope":       func() error { return rt.Scope(func() ([]*runtime.Array, error) { return nil, nil }) },
		"NewStream":   func() error { _, err := rt.NewStream(); return err },
		"NewEvent":    func() error { _, err := rt.NewEvent(); return err },
		"Timer":       func() error { _, err := rt.Timer(func() error { return nil }); return err },
		"CopyToHost":  func() error { _, err := x.CopyToHost(nil); return err },
		"LoadNPY": func() error {
			_, err := rt.LoadNPY("testdata/none.npy", runtime.NPYOptions{})
			return err
		},
		"SaveNPY": func() error { return rt.SaveNPY(t.TempDir()+"/x.npy", h) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panicked: %v", r)
				}
			}()
			if err := call(); !errors.Is(err, runtime.ErrClosed) {
				t.Errorf("error %v, want one that is runtime.ErrClosed", err)
			}
		})
	}
}
