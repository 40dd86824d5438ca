package bindings

import (
	"fmt"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// fakeCuda is a cudaRuntime that records what it is asked to make.
type fakeCuda struct {
	calls     []string
	given     int // arrays handed to the script
	sandboxed bool
}

func (f *fakeCuda) made(what string, shape []int, dt device.DType) (*runtime.Array, error) {
	f.calls = append(f.calls, fmt.Sprintf("%s %v %s", what, shape, dt))
	return new(runtime.Array), nil
}
func (f *fakeCuda) GiveToScript(a *runtime.Array) error { f.given++; return nil }
func (f *fakeCuda) BackendName() string                 { return "cpu" }
func (f *fakeCuda) Device() (device.Info, error) {
	return device.Info{Name: "fake", TotalMemory: 1 << 30, FreeMemory: 1 << 29}, nil
}
func (f *fakeCuda) Synchronize() error { f.calls = append(f.calls, "synchronize"); return nil }
func (f *fakeCuda) ToDevice(h *runtime.HostArray) (*runtime.Array, error) {
	return f.made(fmt.Sprintf("to_device %v", h.Floats()), h.Shape(), h.DType())
}
func (f *fakeCuda) DeviceArray(shape []int, dt device.DType) (*runtime.Array, error) {
	return f.made("device_array", shape, dt)
}
func (f *fakeCuda) Zeros(shape []int, dt device.DType) (*runtime.Array, error) {
	return f.made("zeros", shape, dt)
}
func (f *fakeCuda) Full(shape []int, v float64, dt device.DType) (*runtime.Array, error) {
	return f.made(fmt.Sprintf("full %v", v), shape, dt)
}
func (f *fakeCuda) Rand(shape []int, dt device.DType, seed *uint64) (*runtime.Array, error) {
	return f.made("rand seed "+seedString(seed), shape, dt)
}
func (f *fakeCuda) RandN(shape []int, dt device.DType, seed *uint64) (*runtime.Array, error) {
	return f.made("randn seed "+seedString(seed), shape, dt)
}
func (f *fakeCuda) Seed(seed uint64) { f.calls = append(f.calls, fmt.Sprint("seed ", seed)) }

func seedString(seed *uint64) string {
	if seed == nil {
		return "none"
	}
	return fmt.Sprint(*seed)
}
func (f *fakeCuda) NewHostArray(shape []int, dt device.DType, pinned bool) (*runtime.HostArray, error) {
	f.calls = append(f.calls, fmt.Sprintf("host_array %v %s pinned=%v", shape, dt, pinned))
	return runtime.NewHostArray(shape, dt)
}

func (f *fakeCuda) FileAccess() error {
	if f.sandboxed {
		return runtime.ErrSandboxed
	}
	return nil
}
func (f *fakeCuda) LoadNPY(path string, opts runtime.NPYOptions) (*runtime.HostArray, error) {
	f.calls = append(f.calls, fmt.Sprintf("load_npy %s mmap=%v pinned=%v writable=%v", path, opts.MMap, opts.Pinned, opts.Writable))
	return runtime.NewHostArray([]int{2}, device.Float32)
}
func (f *fakeCuda) CreateNPY(path string, shape []int, dt device.DType) (*runtime.HostArray, error) {
	f.calls = append(f.calls, fmt.Sprintf("create_npy %s %v %s", path, shape, dt))
	return runtime.NewHostArray(shape, dt)
}
func (f *fakeCuda) SaveNPY(path string, x runtime.AnyArray) error {
	f.calls = append(f.calls, fmt.Sprintf("save_npy %s %T %v %s", path, x, x.Shape(), x.DType()))
	return nil
}

func cudaState(t *testing.T, f *fakeCuda) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	registerArrayTypes(nil, L) // arrays made by the fake are never used as arrays
	L.SetGlobal("cuda", L.SetFuncs(L.NewTable(), cudaModule{f}.funcs()))
	return L
}

func TestCudaModuleConvertsShapesDTypesAndTables(t *testing.T) {
	f := &fakeCuda{}
	L := cudaState(t, f)
	err := L.DoString(`
		cuda.to_device({{1, 2, 3}, {4, 5, 6}}, "float64")
		cuda.zeros({2, 3}); cuda.ones(4, "int32"); cuda.full({2}, 7.5)
		cuda.rand({3}, "float16", 9); cuda.rand(5)
		cuda.seed(2^53); cuda.randn({2, 2}, "float64"); cuda.randn(3, nil, 0)
		cuda.device_array({1, 2}, "bfloat16")
		cuda.host_array({2, 2}, "uint8", {pinned = true})
		local h = cuda.load_npy("a.npy", {mmap = true}); cuda.load_npy("b.npy")
		cuda.load_npy("d.npy", {mmap = true, writable = true})
		cuda.save_npy("c.npy", h)
		cuda.create_npy("e.npy", {3, 2}, "float64")
		cuda.synchronize()
		assert(cuda.backend() == "cpu" and cuda.device().name == "fake" and #cuda.devices() == 1)`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"to_device [1 2 3 4 5 6] [2 3] float64",
		"zeros [2 3] float32", "full 1 [4] int32", "full 7.5 [2] float32",
		"rand seed 9 [3] float16", "rand seed none [5] float32",
		"seed 9007199254740992", "randn seed none [2 2] float64", "randn seed 0 [3] float32",
		"device_array [1 2] bfloat16",
		"host_array [2 2] uint8 pinned=true",
		"load_npy a.npy mmap=true pinned=false writable=false", "load_npy b.npy mmap=false pinned=false writable=false",
		"load_npy d.npy mmap=true pinned=false writable=true",
		"save_npy c.npy *runtime.HostArray [2] float32",
		"create_npy e.npy [3 2] float64",
		"synchronize",
	}
	if got := strings.Join(f.calls, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("calls\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if f.given != 9 {
		t.Errorf("%d arrays given to the script, want the 9 device arrays made", f.given)
	}
}

func TestCudaModuleRefusesBadArgumentsBeforeCallingTheRuntime(t *testing.T) {
	f := &fakeCuda{}
	L := cudaState(t, f)
	if err := L.DoString(`h = cuda.host_array(2)`); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	for src, want := range map[string]string{
		`cuda.zeros({2, -1})`:                           "cuda.zeros: bad argument #1",
		`cuda.zeros({2}, "float8")`:                     "cuda.zeros: bad argument #2",
		`cuda.to_device({{1, 2}, {3}})`:                 "cuda.to_device: bad argument #1",
		`cuda.rand({2}, "float32", -1)`:                 "seed must be non-negative",
		`cuda.randn({2}, "int8")`:                       "cuda.randn: bad argument #2",
		`cuda.randn({2}, "float32", 0.5)`:               "cuda.randn: bad argument #3 (seed must be an integer, got 0.5)",
		`cuda.seed(-3)`:                                 "cuda.seed: bad argument #1 (seed must be non-negative, got -3)",
		`cuda.seed("1")`:                                "cuda.seed: bad argument #1 (seed must be an integer, got string)",
		`cuda.full({2}, "x")`:                           "fill value must be a number",
		`cuda.host_array({2}, "float32", {pinned = 1})`: "pinned",
		`cuda.load_npy(1)`:                              "cuda.load_npy: bad argument #1 (path must be a string, got number)",
		`cuda.load_npy("")`:                             "cuda.load_npy: bad argument #1 (path is empty)",
		`cuda.load_npy("a.npy", {mmap = "yes"})`:        "cuda.load_npy: option mmap must be a boolean, got string",
		`cuda.load_npy("a.npy", {mapped = true})`:       "cuda.load_npy: bad argument #2 (unknown option mapped (expected mmap, pinned, writable))",
		`cuda.create_npy("e.npy")`:                      "cuda.create_npy: bad argument #2",
		`cuda.create_npy("e.npy", {2}, "float8")`:       "cuda.create_npy: bad argument #3",
		`cuda.load_npy("a.npy", true)`:                  "cuda.load_npy: bad argument #2 (options table expected, got boolean)",
		`cuda.save_npy("a.npy", {1, 2})`:                "cuda.save_npy: bad argument #2 (HostArray or DeviceArray expected, got table)",
		`cuda.save_npy(nil, h)`:                         "cuda.save_npy: bad argument #1 (path must be a string, got nil)",
	} {
		if err := L.DoString(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", src, err, want)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("the runtime was called: %v", f.calls)
	}
}

func TestLoadAndSaveNPYAreRefusedInTheSandbox(t *testing.T) {
	f := &fakeCuda{sandboxed: true}
	L := cudaState(t, f)
	if err := L.DoString(`h = cuda.host_array(2)`); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{`cuda.load_npy("a.npy")`, `cuda.save_npy("a.npy", h)`} {
		err := L.DoString(src)
		if err == nil || !strings.Contains(err.Error(), "file access is disabled in the sandbox") {
			t.Errorf("%s in the sandbox: %v", src, err)
		}
	}
	if len(f.calls) != 1 {
		t.Errorf("calls %v, want only host_array's", f.calls)
	}
}
