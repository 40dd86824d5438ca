package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// cpuOptions completes opts with the built-in configuration, whatever
// config.toml or GLUA_* the machine running the tests has, and the CPU
// backend with memory bytes unless opts say otherwise.
func cpuOptions(opts runtime.Options, memory string) runtime.Options {
	c := config.Default()
	opts.Config = &c
	if opts.Backend == "" {
		opts.Backend = "cpu"
	}
	if opts.CPUMemory == "" {
		opts.CPUMemory = memory
	}
	return opts
}

// newCPU is a runtime on the CPU backend with the built-in configuration.
func newCPU(t testing.TB, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	return mustNew(t, cpuOptions(opts, "256MiB"))
}

// mustNew is a runtime closed when the test ends.
func mustNew(t testing.TB, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// randomHost is a host array of shape and dt with uniform random
// elements: floats in [-1, 1), integers in [0, 256) for uint8 and in
// [-128, 128) for the signed ones (floats there would truncate to zeros).
func randomHost(t testing.TB, shape []int, dt device.DType) *runtime.HostArray {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		switch {
		case dt.IsFloat():
			v[i] = rand.Float64()*2 - 1
		case dt == device.Uint8:
			v[i] = float64(rand.IntN(256))
		default:
			v[i] = float64(rand.IntN(256) - 128)
		}
	}
	h, err := runtime.HostArrayFromFloats(v, shape, dt)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRoundTripKeepsEveryDType(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, dt := range device.DTypes {
		h := randomHost(t, []int{3, 5}, dt)
		a, err := rt.ToDevice(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := a.CopyToHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(back.Bytes()) != string(h.Bytes()) {
			t.Errorf("%s: bytes changed in a round trip", dt)
		}
	}
}

func TestFreeTwiceIsHarmless(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	a, _ := rt.DeviceArray([]int{1024}, runtime.Float32)
	used := rt.Stats().Used
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if err := a.Free(); err != nil {
		t.Fatalf("second free: %v", err)
	}
	if rt.Stats().Used >= used || rt.Stats().Frees != 1 {
		t.Fatalf("stats after two frees: %+v", rt.Stats())
	}
	if _, err := a.CopyToHost(nil); !errors.Is(err, runtime.ErrFreed) {
		t.Fatalf("use after free: got %v", err)
	}
}

func TestUnreachableArraysReturnTheirMemory(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "64MiB"})
	// 200 × 4 MiB under a 64 MiB cap only fits if the garbage collector's
	// cleanups hand the dropped arrays back.
	for i := 0; i < 200; i++ {
		if _, err := rt.DeviceArray([]int{1 << 20}, runtime.Float32); err != nil {
			t.Fatalf("iteration %d: %v", i, err)
		}
	}
	if r := rt.Stats().Reserved; r > 64<<20 {
		t.Fatalf("reserved %d over the hard limit", r)
	}
}

func TestDroppedArraysAreCollectedOnceNewerOnesAreMade(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for i := 0; i < 10; i++ {
		rt.DeviceArray([]int{256}, runtime.Float32) // dropped at once
	}
	// Newer arrays, freed at once, until the dropped ones have their
	// cleanups: at most 64 arrays wait for one.
	for i := 0; i < 64; i++ {
		x, _ := rt.DeviceArray([]int{256}, runtime.Float32)
		x.Free()
	}
	for try := 0; try < 50 && rt.LiveArrays() > 0; try++ {
		goruntime.GC()
		time.Sleep(5 * time.Millisecond)
		x, _ := rt.DeviceArray([]int{1}, runtime.Float32) // drains cleanups
		x.Free()
	}
	if n := rt.LiveArrays(); n != 0 {
		t.Fatalf("%d dropped arrays still held after 64 newer ones and a collection", n)
	}
}

func TestViewsKeepTheirBufferAlive(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	a, _ := rt.Full([]int{4, 4}, 3, runtime.Float64)
	v, err := a.Rows(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	a = nil
	// 16 MiB of newer arrays: a and v get their cleanups (see newArray).
	big, _ := rt.DeviceArray([]int{4 << 20}, runtime.Float32)
	big.Free()
	for i := 0; i < 3; i++ {
		goruntime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := rt.DeviceArray([]int{16}, runtime.Float64); err != nil { // drains cleanups
		t.Fatal(err)
	}
	s, err := rt.Sum(v)
	if err != nil || s != 24 {
		t.Fatalf("view after its base became unreachable: sum %v, %v", s, err)
	}
}

func TestScopeFreesOnErrorAndKeepsReturned(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	var inner, kept *runtime.Array
	err := rt.Scope(func() ([]*runtime.Array, error) {
		inner, _ = rt.Zeros([]int{8}, runtime.Float32)
		kept, _ = rt.Zeros([]int{8}, runtime.Float32)
		return []*runtime.Array{kept}, nil
	})
	if err != nil || !inner.IsFreed() || kept.IsFreed() {
		t.Fatalf("scope: err %v, inner freed %v, kept freed %v", err, inner.IsFreed(), kept.IsFreed())
	}
	boom := errors.New("boom")
	err = rt.Scope(func() ([]*runtime.Array, error) {
		inner, _ = rt.Zeros([]int{8}, runtime.Float32)
		return nil, boom
	})
	if !errors.Is(err, boom) || !inner.IsFreed() {
		t.Fatalf("scope with error: %v, inner freed %v", err, inner.IsFreed())
	}
	func() {
		defer func() { recover() }()
		rt.Scope(func() ([]*runtime.Array, error) {
			inner, _ = rt.Zeros([]int{8}, runtime.Float32)
			panic("unwinding")
		})
	}()
	if !inner.IsFreed() {
		t.Fatal("scope did not free when unwound by a panic")
	}
}

func TestCloseFreesEverything(t *testing.T) {
	c := config.Default()
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "64MiB", Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := rt.Zeros([]int{100}, runtime.Float32)
	if err := rt.DoString(`local cuda = require("cuda"); held = cuda.zeros({4, 4})`); err != nil {
		t.Fatal(err)
	}
	err = rt.Close()
	if err == nil || !strings.Contains(err.Error(), "2 arrays still alive at close") || !strings.Contains(err.Error(), "allocated at <string>:1") {
		t.Fatalf("debug close should report the leaks with their sites, got %v", err)
	}
	if !a.IsFreed() {
		t.Fatal("array not freed by Close")
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestOOMLeavesLiveArraysAndRuntimeUsable(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "16MiB"})
	live, _ := rt.Full([]int{1 << 20}, 2, runtime.Float32)
	_, err := rt.DeviceArray([]int{8 << 20}, runtime.Float32)
	if err == nil || !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("want an out-of-memory error, got %v", err)
	}
	for _, want := range []string{"tried to allocate 32.00 MiB", "hard limit 16.00 MiB", "in use by 1 array"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("OOM message %q lacks %q", err, want)
		}
	}
	if s, err := rt.Sum(live); err != nil || s != 2<<20 {
		t.Fatalf("live array after OOM: %v %v", s, err)
	}
	if _, err := rt.DeviceArray([]int{1 << 20}, runtime.Float32); err != nil {
		t.Fatalf("allocation after OOM: %v", err)
	}
}

func TestRuntimesAreIsolatedAndRunConcurrently(t *testing.T) {
	rts := make([]*runtime.Runtime, 4)
	for i := range rts {
		rts[i] = newCPU(t, runtime.Options{HardLimit: "32MiB"})
	}
	foreign, _ := rts[1].Zeros([]int{4}, runtime.Float32)
	if _, err := rts[0].Sum(foreign); err == nil || !strings.Contains(err.Error(), "another runtime") {
		t.Fatalf("using another runtime's array: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(rts))
	for i, rt := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- rt.DoString(fmt.Sprintf(`
				local cuda, kernels = require("cuda"), require("kernels")
				local acc = cuda.zeros({64, 64})
				for i = 1, 200 do
					local x = cuda.rand({64, 64}, "float32", %d + i) -- dropped each time
					kernels.add(acc, x)
				end
				assert(kernels.sum(acc) > 0)`, i*1000))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSandboxHasNoHostAccess(t *testing.T) {
	rt := newCPU(t, runtime.Options{Sandbox: true})
	if err := rt.DoString(`assert(require("cuda").backend() == "cpu"); assert(os == nil and io == nil and dofile == nil and loadfile == nil)`); err != nil {
		t.Fatal(err)
	}
	// No bytecode: nothing makes it, and what looks like it does not load.
	if err := rt.DoString(`
		assert(string.dump == nil and debug == nil and package.loadlib == nil)
		local f, err = loadstring("\27Lua\81\0\1\4\8\4\8\0")
		assert(f == nil and err, "a binary chunk loaded")
		assert(loadstring("return 1 + 1")() == 2)`); err != nil {
		t.Fatal(err)
	}
	err := rt.DoString(`require("some_file_module")`)
	if err == nil || !strings.Contains(err.Error(), "module 'some_file_module' not found:\n\tno field package.preload['some_file_module']") {
		t.Fatalf("file require in the sandbox: %v", err)
	}
	path := filepath.Join(t.TempDir(), "x.npy")
	rt.Lua().SetGlobal("path", lua.LString(path))
	err = rt.DoString(`
		local cuda, pool = require("cuda"), require("pool")
		local h, d = cuda.host_array(2), cuda.zeros(2)
		for _, call in ipairs({
			function() return cuda.load_npy(path) end,
			function() return cuda.save_npy(path, h) end,
			function() return h:save_npy(path) end,
			function() return d:save_npy(path) end,
			function() pool.record(true); return pool.dump_profile(path) end,
		}) do
			local ok, err = pcall(call)
			assert(not ok and err:find("file access is disabled in the sandbox", 1, true), tostring(err))
		end`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a sandboxed script wrote %s", path)
	}
}

func TestContextStopsAScript(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rt := newCPU(t, runtime.Options{Context: ctx})
	start := time.Now()
	err := rt.DoString(`while true do end`)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled script: %v after %v", err, time.Since(start))
	}
}

func TestMatmulChecksShapesBeforeRunning(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	A, _ := rt.Full([]int{2, 3}, 1, runtime.Float32)
	B, _ := rt.Full([]int{2, 3}, 1, runtime.Float32)
	C, _ := rt.Full([]int{2, 3}, 7, runtime.Float32)
	err := rt.Matmul(C, A, B, runtime.MatmulOptions{})
	if err == nil || err.Error() != "A is 2x3 but B is 2x3; inner dimensions 3 and 2 differ" {
		t.Fatalf("got %v", err)
	}
	if s, _ := rt.Sum(C); s != 42 {
		t.Fatalf("C was touched: sum %v", s)
	}
}

func TestMatmulMatchesReference(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, dt := range []device.DType{runtime.Float32, runtime.Float64, runtime.Float16, runtime.BFloat16} {
		m, k, n := 13, 21, 7
		ha, hb := randomHost(t, []int{k, m}, dt), randomHost(t, []int{n, k}, dt)
		A, _ := rt.ToDevice(ha)
		B, _ := rt.ToDevice(hb)
		C, _ := rt.Full([]int{m, n}, 1, dt)
		if err := rt.Matmul(C, A, B, runtime.MatmulOptions{TransA: true, TransB: true, Alpha: 2, AlphaSet: true, Beta: 0.5}); err != nil {
			t.Fatal(err)
		}
		got, _ := C.Float64s()
		a, b := ha.Floats(), hb.Floats()
		var num, den float64
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for l := 0; l < k; l++ {
					s += a[l*m+i] * b[j*k+l]
				}
				want := 2*s + 0.5
				num += (got[i*n+j] - want) * (got[i*n+j] - want)
				den += want * want
			}
		}
		tol := map[device.DType]float64{runtime.Float32: 1e-5, runtime.Float64: 1e-12, runtime.Float16: 1e-2, runtime.BFloat16: 1e-2}[dt]
		if rel := num / den; !(rel < tol*tol) {
			t.Errorf("%s: relative error %g", dt, rel)
		}
	}
}

func TestMultipleAssignmentFollowsLua51(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	err := rt.DoString(`
		local a, b = 1, 2
		a, b = b, a
		assert(a == 2 and b == 1, "swap gave " .. a .. " " .. b)
		local f = loadstring("local x, y = 0, 0; x, y = x + 1, x + y; return x, y")
		local x, y = f()
		assert(x == 1 and y == 0, "loadstring gave " .. x .. " " .. y)`)
	if err != nil {
		t.Fatal(err)
	}
}

func TestElementwiseChecksItsArraysBeforeRunning(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	y, _ := rt.Full([]int{2, 3}, 7, runtime.Float32)
	x, _ := rt.Full([]int{3, 2}, 1, runtime.Float32)
	for _, tc := range []struct {
		op   string
		x    *runtime.Array
		want string
	}{
		{"add", x, "y is 2x3 but x is 3x2; shapes must match"},
		{"add", nil, "x is nil"},
		{"scale", x, "scale takes one array, not two"},
		{"", x, "no elementwise kernel given"},
	} {
		err := rt.Elementwise(kernels.LookupElementwise(tc.op), y, 2, tc.x)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.op, err, tc.want)
		}
	}
	if s, _ := rt.Sum(y); s != 42 {
		t.Fatalf("y was touched: sum %v", s)
	}
}
