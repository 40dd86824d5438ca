package cuda_test

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

// argsKernel writes each of its scalar arguments, widened to double, so
// that the marshalling of every argument type can be checked.
const argsKernel = `
extern "C" __global__ void args(double* out, int a, unsigned int b, long long c, unsigned long long d, float e, double f) {
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		out[0] = a; out[1] = b; out[2] = (double)c; out[3] = (double)d; out[4] = e; out[5] = f;
	}
}
// iota writes out[i] = i over a 2-D grid of 2-D blocks, to check that every
// dimension reaches the kernel.
extern "C" __global__ void iota(int* out, int width, int height) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < width && y < height) out[y * width + x] = y * width + x;
}
// shared_reverse reverses n floats through dynamic shared memory.
extern "C" __global__ void shared_reverse(float* x, int n) {
	extern __shared__ float s[];
	for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = x[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x) x[i] = s[n - 1 - i];
}
`

func download[T any](t *testing.T, b *cuda.Backend, p device.Ptr, n int, dt device.DType, get func([]byte, int) T) []T {
	t.Helper()
	raw := make([]byte, n*dt.Size())
	if err := b.Download(raw, p, 0); err != nil {
		t.Fatal(err)
	}
	out := make([]T, n)
	for i := range out {
		out[i] = get(raw, i)
	}
	return out
}

// compile builds src and looks up entries in it, or fails the test; the
// module closes when the test ends (closing it before is harmless).
func compile(t *testing.T, b *cuda.Backend, src, name string, entries ...string) (*cuda.Module, []*cuda.Function) {
	t.Helper()
	m, err := b.Compile(src, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	fs := make([]*cuda.Function, len(entries))
	for i, e := range entries {
		if fs[i], err = m.Function(e); err != nil {
			t.Fatal(err)
		}
	}
	return m, fs
}

// randomWords draws n 64-bit words, and gives them also as the bytes of
// an upload.
func randomWords(rng *rand.Rand, n int) ([]uint64, []byte) {
	words, raw := make([]uint64, n), make([]byte, 8*n)
	for i := range words {
		words[i] = rng.Uint64()
		binary.LittleEndian.PutUint64(raw[8*i:], words[i])
	}
	return words, raw
}

func TestLaunchPassesEveryArgumentType(t *testing.T) {
	b := cudatest.Shared(t)
	_, fs := compile(t, b, argsKernel, "args.cu", "args")
	f := fs[0]
	out, err := b.Alloc(6 * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(out, 48)
	one := [3]uint32{1, 1, 1}
	err = b.Launch(f, one, [3]uint32{32, 1, 1}, 0, 0, out, int32(-7), uint32(4000000000), int64(-1)<<40, uint64(1)<<50, float32(1.25), -2.5e300)
	if err != nil {
		t.Fatal(err)
	}
	got := download(t, b, out, 6, device.Float64, func(r []byte, i int) float64 { return device.Get(device.Float64, r, i) })
	want := []float64{-7, 4000000000, -(1 << 40), 1 << 50, 1.25, -2.5e300}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("argument %d arrived as %v, want %v", i+2, got[i], want[i])
		}
	}
	if err := b.Launch(f, one, one, 0, 0, out, 7); err == nil || !strings.Contains(err.Error(), "argument 2") {
		t.Errorf("a Go int argument: %v, want an error naming argument 2", err)
	}
}

func TestLaunchUsesEveryGridAndBlockDimension(t *testing.T) {
	b := cudatest.Shared(t)
	_, fs := compile(t, b, argsKernel, "args.cu", "iota")
	f := fs[0]
	const w, h = 100, 70
	out, _ := b.Alloc(w * h * 4)
	defer b.Free(out, w*h*4)
	b.Memset(out, 0xff, w*h*4, 0)
	if err := b.Launch(f, [3]uint32{(w + 15) / 16, (h + 7) / 8, 1}, [3]uint32{16, 8, 1}, 0, 0, out, int32(w), int32(h)); err != nil {
		t.Fatal(err)
	}
	got := download(t, b, out, w*h, device.Int32, func(r []byte, i int) float64 { return device.Get(device.Int32, r, i) })
	for i, v := range got {
		if v != float64(i) {
			t.Fatalf("out[%d] = %v", i, v)
		}
	}
}

func TestLaunchWithBadBlockSizeIsAnErrorAndTheBackendStaysUsable(t *testing.T) {
	b := cudatest.Shared(t)
	m, err := b.Compile(argsKernel, "args.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, _ := m.Function("iota")
	out, _ := b.Alloc(4096)
	defer b.Free(out, 4096)
	for _, block := range [][3]uint32{{2048, 1, 1}, {32, 32, 2}, {1, 1, 128}, {0, 1, 1}} {
		err := b.Launch(f, [3]uint32{1, 1, 1}, block, 0, 0, out, int32(1), int32(1))
		if err == nil {
			t.Errorf("block %v launched", block)
			continue
		}
		if !strings.Contains(err.Error(), "CU_DEVICE_ATTRIBUTE") && !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("block %v: error %q does not name the limit", block, err)
		}
	}
	if err := b.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0, 0, out, int32(32), int32(1)); err != nil {
		t.Fatalf("backend unusable after rejected launches: %v", err)
	}
	if err := b.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func TestLaunchRaisesTheDynamicSharedMemoryLimit(t *testing.T) {
	b := cudatest.Shared(t)
	info, _ := b.Info()
	if info.ComputeCapability[0] < 7 {
		t.Skip("opt-in shared memory beyond 48 KiB needs compute capability 7.0")
	}
	m, err := b.Compile(argsKernel, "args.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, _ := m.Function("shared_reverse")
	const n = 20000 // 80000 bytes of shared memory
	raw := make([]byte, n*4)
	for i := range n {
		device.Set(device.Float32, raw, i, float64(i))
	}
	x, _ := b.Alloc(n * 4)
	defer b.Free(x, n*4)
	b.Upload(x, raw, 0)
	if err := b.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{256, 1, 1}, n*4, 0, x, int32(n)); err != nil {
		t.Fatal(err)
	}
	got := download(t, b, x, n, device.Float32, func(r []byte, i int) float64 { return device.Get(device.Float32, r, i) })
	for i, v := range got {
		if v != float64(n-1-i) {
			t.Fatalf("x[%d] = %v after the reversal", i, v)
		}
	}
	if err := b.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{256, 1, 1}, 4<<20, 0, x, int32(n)); err == nil || !strings.Contains(err.Error(), "SHARED_MEMORY_PER_BLOCK_OPTIN") {
		t.Errorf("4 MiB of shared memory: %v", err)
	}
}

func TestCompileErrorCarriesTheNVRTCLog(t *testing.T) {
	b := cudatest.Shared(t)
	_, err := b.Compile(`extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }`, "broken.cu", nil)
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Name != "NVRTC_ERROR_COMPILATION" {
		t.Fatalf("Compile = %v, want NVRTC_ERROR_COMPILATION", err)
	}
	if !strings.Contains(ce.Log, "undefined_name") || !strings.Contains(err.Error(), "broken.cu") {
		t.Errorf("error does not carry NVRTC's log naming the file and the identifier:\n%v", err)
	}
	if _, err := b.Compile(argsKernel, "opts.cu", []string{"--no-such-option"}); err == nil {
		t.Error("an unknown NVRTC option was accepted")
	}
	m, err := b.Compile(argsKernel, "args.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Function("no_such_kernel"); err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_NOT_FOUND") {
		t.Errorf("missing entry point: %v", err)
	}
}

func TestSecondCompileIsACacheHit(t *testing.T) {
	dir := t.TempDir()
	b := cudatest.Load(t, cuda.Config{KernelCache: dir})
	src := argsKernel + "// " + t.Name() + time.Now().String() + "\n" // never cached before
	m1, err := b.Compile(src, "args.cu", []string{"-lineinfo"})
	if err != nil {
		t.Fatal(err)
	}
	m1.Close()
	if st := b.KernelStats(); st.Compiles != 1 || st.CacheHits != 0 {
		t.Fatalf("after the first compile: %+v", st)
	}
	m2, err := b.Compile(src, "args.cu", []string{"-lineinfo"})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if st := b.KernelStats(); st.Compiles != 1 || st.CacheHits != 1 {
		t.Fatalf("after the second compile: %+v", st)
	}
	// A different option is a different entry.
	m3, err := b.Compile(src, "args.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close()
	if st := b.KernelStats(); st.Compiles != 2 {
		t.Fatalf("a different option did not compile: %+v", st)
	}
	// A new process (here: a new backend) on the same cache compiles nothing.
	b2 := cudatest.Load(t, cuda.Config{KernelCache: dir})
	m4, err := b2.Compile(src, "args.cu", []string{"-lineinfo"})
	if err != nil {
		t.Fatal(err)
	}
	defer m4.Close()
	if st := b2.KernelStats(); st.Compiles != 0 || st.CacheHits != 1 {
		t.Fatalf("a fresh backend on a warm cache: %+v", st)
	}
	f, _ := m4.Function("args")
	out, _ := b2.Alloc(48)
	defer b2.Free(out, 48)
	if err := b2.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, out, int32(1), uint32(2), int64(3), uint64(4), float32(5), 6.0); err != nil {
		t.Fatalf("launching a kernel loaded from the cache: %v", err)
	}
}

func TestCorruptCacheEntriesAreRecompiledAndRewritten(t *testing.T) {
	dir := t.TempDir()
	b := cudatest.Load(t, cuda.Config{KernelCache: dir})
	src := argsKernel + "// " + t.Name() + time.Now().String() + "\n"
	m, err := b.Compile(src, "args.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	entries, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(entries) != 1 {
		t.Fatalf("cache holds %v, want one entry", entries)
	}
	entry := entries[0]
	good, _ := os.ReadFile(entry)
	for i, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return []byte("garbage") },
		func(b []byte) []byte { return b[:len(b)/2] },
		// An entry whose checksum matches but which the driver rejects:
		// the same header over an image of zeros.
		func([]byte) []byte { return cacheEntry(make([]byte, 4096)) },
	} {
		before := b.KernelStats()
		os.WriteFile(entry, damage(append([]byte(nil), good...)), 0o644)
		m, err := b.Compile(src, "args.cu", nil)
		if err != nil {
			t.Fatalf("damage %d: Compile failed instead of recompiling: %v", i, err)
		}
		m.Close()
		if st := b.KernelStats(); st.Compiles != before.Compiles+1 {
			t.Errorf("damage %d: %+v then %+v, want one more compile", i, before, st)
		}
		// The entry was rewritten: the next compile is a hit.
		mid := b.KernelStats()
		m, err = b.Compile(src, "args.cu", nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		if st := b.KernelStats(); st.CacheHits != mid.CacheHits+1 || st.Compiles != mid.Compiles {
			t.Errorf("damage %d: the entry was not rewritten (%+v then %+v)", i, mid, st)
		}
	}
}

// cacheEntry builds a cache entry in the documented format: magic,
// SHA-256 of the image, image.
func cacheEntry(image []byte) []byte {
	sum := sha256.Sum256(image)
	return append(append([]byte("GLUAKRN1"), sum[:]...), image...)
}

func TestKernelCacheOffNeverTouchesDisk(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	for range 2 {
		m, err := b.Compile(argsKernel+"// off\n", "args.cu", nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	if st := b.KernelStats(); st.Compiles != 2 || st.CacheHits != 0 {
		t.Errorf("with the cache off: %+v", st)
	}
	if !strings.Contains(strings.Join(b.Describe(), "\n"), "kernel cache: off") {
		t.Error("Describe does not say the cache is off")
	}
}

func TestLauncherReusesOneModule(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	var fs []func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error
	for _, entry := range []string{"args", "iota", "args"} {
		f, err := b.Launcher(argsKernel, "args.cu", nil, entry)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if st := b.KernelStats(); st.Compiles != 1 {
		t.Errorf("three launchers from one source compiled %d times", st.Compiles)
	}
	out, _ := b.Alloc(48)
	defer b.Free(out, 48)
	if err := fs[2]([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, out, int32(1), uint32(2), int64(3), uint64(4), float32(5), 6.0); err != nil {
		t.Fatal(err)
	}
	got := download(t, b, out, 6, device.Float64, func(r []byte, i int) float64 { return device.Get(device.Float64, r, i) })
	if got[5] != 6 {
		t.Errorf("launcher wrote %v", got)
	}
}

// TestLauncherWithCarveoutSetsTheEntrysPreference: the driver reports the
// carveout asked for, a launch reserving shared memory the kernel does
// not use runs, and a carveout outside 0 to 100 is refused by name.
func TestLauncherWithCarveoutSetsTheEntrysPreference(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	launch, err := b.LauncherWithCarveout(argsKernel, "args.cu", nil, "args", 50)
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.LauncherFunction(argsKernel, "args.cu", nil, "args")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Carveout(f); err != nil || got != 50 {
		t.Errorf("carveout %d, %v after asking for 50", got, err)
	}
	out, _ := b.Alloc(48)
	defer b.Free(out, 48)
	if err := launch([3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 16<<10, 0, out, int32(1), uint32(2), int64(3), uint64(4), float32(5), 6.0); err != nil {
		t.Fatal(err)
	}
	if got := download(t, b, out, 6, device.Float64, func(r []byte, i int) float64 { return device.Get(device.Float64, r, i) }); got[0] != 1 || got[5] != 6 {
		t.Errorf("launch with 16 KiB reserved wrote %v", got)
	}
	for _, bad := range []int{-1, 101} {
		_, err := b.LauncherWithCarveout(argsKernel, "args.cu", nil, "args", bad)
		want := fmt.Sprintf("cuda: args: a shared memory carveout of %d%%: want 0 to 100", bad)
		if err == nil || err.Error() != want {
			t.Errorf("carveout %d: %v, want %q", bad, err, want)
		}
	}
	if got, err := b.Carveout(f); err != nil || got != 50 {
		t.Errorf("carveout %d, %v after refused requests", got, err)
	}
}

// TestStickyFaultRefusesFurtherWork runs in a child process: a kernel that
// writes through a bad pointer leaves the process's CUDA context unusable,
// which would break every later test of this binary.
func TestStickyFaultRefusesFurtherWork(t *testing.T) {
	if os.Getenv("GLUA_CUDA_STICKY_CHILD") == "1" {
		stickyChild(t)
		return
	}
	cudatest.Shared(t) // skip (or fail) here when there is no GPU
	cmd := exec.Command(os.Args[0], "-test.run=^TestStickyFaultRefusesFurtherWork$", "-test.v")
	cmd.Env = append(os.Environ(), "GLUA_CUDA_STICKY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sticky fault handled") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

func stickyChild(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	m, err := b.Compile(`extern "C" __global__ void crash(int* p) { *p = 1; }`, "crash.cu", nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := m.Function("crash")
	if err := b.Launch(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, 0, device.Ptr(8)); err != nil {
		t.Fatalf("launch: %v", err)
	}
	err = b.Synchronize()
	if !errors.Is(err, cuda.ErrContextLost) {
		t.Fatalf("Synchronize after a write to address 8 = %v, want a sticky error", err)
	}
	t.Logf("fault: %v", err)
	start := time.Now()
	_, err2 := b.Alloc(1024)
	if !errors.Is(err2, cuda.ErrContextLost) || err2.Error() != err.Error() {
		t.Fatalf("Alloc after the fault = %v, want the same sticky error", err2)
	}
	if _, err3 := b.Compile("// nothing", "x.cu", nil); err3 == nil || err3.Error() != err.Error() {
		t.Fatalf("Compile after the fault = %v", err3)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusing work took %v", d)
	}
	if !strings.Contains(strings.Join(b.Describe(), "\n"), "state:") {
		t.Error("Describe does not report the lost context")
	}
	t.Log("sticky fault handled")
}

// Arguments beyond the pooled parameter block's slots still reach the
// kernel in order, and launches with few and many alternate correctly.
func TestLaunchesWithManyArguments(t *testing.T) {
	b := cudatest.Shared(t)
	rng := newRand(t)
	const many = 40
	var params, body strings.Builder
	params.WriteString("unsigned long long* out") // unsigned: it wraps as Go's int64 does
	for i := range many {
		fmt.Fprintf(&params, ", unsigned long long a%d", i)
		fmt.Fprintf(&body, " s = s * 3 + a%d;", i)
	}
	src := fmt.Sprintf(`extern "C" __global__ void many(%s) { unsigned long long s = 0;%s out[0] = s; }
extern "C" __global__ void one(long long* out, long long a) { out[0] = a; }`, params.String(), body.String())
	_, fs := compile(t, b, src, "many.cu", "many", "one")
	manyFn, oneFn := fs[0], fs[1]
	out, err := b.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(out, 8)
	one3 := [3]uint32{1, 1, 1}
	read := func() int64 {
		return download(t, b, out, 1, device.Int64, func(r []byte, i int) int64 { return int64(binary.LittleEndian.Uint64(r[8*i:])) })[0]
	}
	for range 3 {
		args := []any{out}
		var want int64
		for range many {
			v := rng.Int64N(1000) - 500
			args = append(args, v)
			want = want*3 + v
		}
		if err := b.Launch(manyFn, one3, one3, 0, 0, args...); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != want {
			t.Fatalf("a kernel of %d arguments computed %d, want %d", many, got, want)
		}
		v := rng.Int64N(1 << 40)
		if err := b.Launch(oneFn, one3, one3, 0, 0, out, v); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != v {
			t.Fatalf("a kernel of 2 arguments wrote %d, want %d", got, v)
		}
	}
}

// BenchmarkLaunch is the host's cost of launching a tiny kernel back to
// back: through Launch (a glua kernel's path below the runtime), and
// straight through cuLaunchKernel with and without making the context
// current each time (the driver's floor from Go).
func BenchmarkLaunch(b *testing.B) {
	be := cudatest.Shared(b)
	m, err := be.Compile(`extern "C" __global__ void tiny(float* x, long long n, double a, int v) {
		long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
		if (i < n) x[i] = x[i] * (float)a + v; }`, "tiny.cu", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	f, err := m.Function("tiny")
	if err != nil {
		b.Fatal(err)
	}
	x, err := be.Alloc(64)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Free(x, 64)
	s := cudatest.Stream(b, be)
	one, block := [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}
	run := func(b *testing.B, launch func(n int) error) {
		if err := launch(100); err != nil { // warm
			b.Fatal(err)
		}
		if err := be.StreamSynchronize(s); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		if err := launch(b.N); err != nil {
			b.Fatal(err)
		}
		if err := be.StreamSynchronize(s); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Launch", func(b *testing.B) {
		run(b, func(n int) error {
			for range n {
				if err := be.Launch(f, one, block, 0, s, x, int64(16), 1.0, int32(0)); err != nil {
					return err
				}
			}
			return nil
		})
	})
	for _, setContext := range []bool{false, true} {
		b.Run(fmt.Sprintf("cuLaunchKernel/context=%v", setContext), func(b *testing.B) {
			run(b, func(n int) error { return be.LaunchRaw(f, n, one, block, s, setContext, x, int64(16), 1.0, int32(0)) })
		})
	}
}

// TestQueuedLaunchesKeepTheirOrder runs chains of dependent launches, with
// uploads and downloads between them on the same stream, from two
// goroutines at once: whether a launch went through the launch queue or
// straight to the driver, every value must be the host's.
func TestQueuedLaunchesKeepTheirOrder(t *testing.T) {
	b := cudatest.Shared(t)
	_, fs := compile(t, b, `extern "C" __global__ void step(unsigned long long* x, int n, unsigned long long a, unsigned long long v) {
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		if (i < n) x[i] = x[i] * a + v + i; }`, "step.cu", "step")
	f := fs[0]
	before, queue := b.QueuedLaunches()
	if cuda.LaunchQueueWanted() != queue {
		t.Fatalf("the backend has a launch queue: %v; this process wants one: %v", queue, cuda.LaunchQueueWanted())
	}
	const n, steps = 1000, 3000
	chain := func(seed int64) error {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		s, err := b.NewStream()
		if err != nil {
			return err
		}
		defer b.DestroyStream(s)
		x, err := b.Alloc(8 * n)
		if err != nil {
			return err
		}
		defer b.Free(x, 8*n)
		want, raw := randomWords(rng, n)
		if err := b.Upload(x, raw, s); err != nil {
			return err
		}
		for k := range steps {
			a, v := rng.Uint64()|1, rng.Uint64()
			if err := b.Launch(f, [3]uint32{(n + 127) / 128, 1, 1}, [3]uint32{128, 1, 1}, 0, s, x, int32(n), a, v); err != nil {
				return err
			}
			for i := range want {
				want[i] = want[i]*a + v + uint64(i)
			}
			if k%37 == 0 { // an upload between launches
				i := rng.IntN(n)
				want[i] = rng.Uint64()
				one := binary.LittleEndian.AppendUint64(nil, want[i])
				if err := b.Upload(x+device.Ptr(8*i), one, s); err != nil {
					return err
				}
			}
			if k%500 == 499 || k == steps-1 {
				if err := b.Download(raw, x, s); err != nil {
					return err
				}
				for i := range want {
					if got := binary.LittleEndian.Uint64(raw[8*i:]); got != want[i] {
						return fmt.Errorf("after launch %d, x[%d] = %d, want %d", k+1, i, got, want[i])
					}
				}
			}
		}
		return nil
	}
	seed := newRand(t).Int64()
	errs := make(chan error, 2)
	for g := range 2 {
		go func() { errs <- chain(seed + int64(g)) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	after, _ := b.QueuedLaunches()
	t.Logf("%d of %d launches went through the queue", after-before, 2*steps)
	if queue && after-before < steps {
		t.Errorf("only %d of %d launches went through the launch queue", after-before, 2*steps)
	}
}

// TestRunsOfLaunchesAsGraphs launches faster than the driver takes
// launches one at a time, so that the worker gives it runs as graphs, and
// varies what each run holds: two kernels of one module and one of another,
// grids of different sizes, new and repeated arguments, a second stream
// (destroyed and made again), and a module closed between runs. Every value is checked against the
// host's.
func TestRunsOfLaunchesAsGraphs(t *testing.T) {
	b := cudatest.Shared(t)
	const src = `
extern "C" __global__ void mul(unsigned long long* x, int n, unsigned long long a) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = x[i] * a + i; }
extern "C" __global__ void xor_add(unsigned long long* x, int n, unsigned long long v) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = (x[i] ^ v) + 1; }`
	_, fs := compile(t, b, src, "runs.cu", "mul", "xor_add")
	mul, xorAdd := fs[0], fs[1]
	rng := newRand(t)
	const n = 4096
	s2, err := b.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.DestroyStream(s2) }()
	x, err := b.Alloc(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(x, 8*n)
	want, raw := randomWords(rng, n)
	if err := b.Upload(x, raw, 0); err != nil {
		t.Fatal(err)
	}
	check := func(when string, s device.Stream) {
		t.Helper()
		if err := b.Download(raw, x, s); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got := binary.LittleEndian.Uint64(raw[8*i:]); got != want[i] {
				t.Fatalf("%s: x[%d] = %d, want %d", when, i, got, want[i])
			}
		}
	}
	// other is a kernel of a module of its own, closed after a few rounds.
	var other *cuda.Function
	var otherMod *cuda.Module
	runs0, launches0 := b.GraphRuns()
	s := device.Stream(0)
	for round := range 40 {
		if round%8 == 0 {
			entry := fmt.Sprintf("neg%d", round)
			om, fs := compile(t, b, fmt.Sprintf(`extern "C" __global__ void %s(unsigned long long* x, int n) {
				int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = ~x[i]; }`, entry), "neg.cu", entry)
			other, otherMod = fs[0], om
		}
		a, v := rng.Uint64()|1, rng.Uint64()
		for k := range 500 {
			// The same launch repeats in stretches, as in a loop.
			if k%50 == 0 {
				a, v = rng.Uint64()|1, rng.Uint64()
			}
			cnt := n
			if rng.IntN(3) == 0 {
				cnt = 1 + rng.IntN(n)
			}
			grid := [3]uint32{uint32((cnt + 127) / 128), 1, 1}
			var err error
			switch op := rng.IntN(7); {
			case op < 3:
				err = b.Launch(mul, grid, [3]uint32{128, 1, 1}, 0, s, x, int32(cnt), a)
				for i := range cnt {
					want[i] = want[i]*a + uint64(i)
				}
			case op < 6:
				err = b.Launch(xorAdd, grid, [3]uint32{128, 1, 1}, 0, s, x, int32(cnt), v)
				for i := range cnt {
					want[i] = (want[i] ^ v) + 1
				}
			default:
				err = b.Launch(other, grid, [3]uint32{128, 1, 1}, 0, s, x, int32(cnt))
				for i := range cnt {
					want[i] = ^want[i]
				}
			}
			if err != nil {
				t.Fatalf("round %d, launch %d: %v", round, k, err)
			}
		}
		check(fmt.Sprintf("after round %d", round), s)
		if round%8 == 7 {
			if err := otherMod.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if round == 19 { // a new stream in the old one's place
			if err := b.DestroyStream(s2); err != nil {
				t.Fatal(err)
			}
			if s2, err = b.NewStream(); err != nil {
				t.Fatal(err)
			}
			if s != 0 {
				s = s2
			}
		}
		if round%4 == 3 { // change streams: the download above ordered them
			if s == 0 {
				s = s2
			} else {
				s = 0
			}
		}
	}
	// More streams with runs than keep graphs at once.
	for i := range 20 {
		si, err := b.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer b.DestroyStream(si)
		a := rng.Uint64() | 1
		for range 200 {
			if err := b.Launch(mul, [3]uint32{n / 128, 1, 1}, [3]uint32{128, 1, 1}, 0, si, x, int32(n), a); err != nil {
				t.Fatal(err)
			}
			for j := range want {
				want[j] = want[j]*a + uint64(j)
			}
		}
		check(fmt.Sprintf("on new stream %d", i+1), si)
	}
	runs, launches := b.GraphRuns()
	queued, queue := b.QueuedLaunches()
	t.Logf("%d runs as graphs held %d of 24000 launches (%d through the queue)", runs-runs0, launches-launches0, queued)
	if queue && runs == runs0 {
		t.Error("no run of launches went to the driver as a graph")
	}
}
