package runtime_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/runtime"
)

// TestSharedPoolOnTheGPU runs runtimes sharing one CUDA backend and pool at
// once: elementwise kernels and reductions (modules compiled once for all),
// cuBLAS products (a handle and workspace per runtime's stream, the
// workspace from the shared pool), arrays dropped to the garbage collector
// under each quota, and a user kernel launched by every runtime with
// different amounts of dynamic shared memory. It skips without a GPU.
func TestSharedPoolOnTheGPU(t *testing.T) {
	c := config.Default()
	c.CUDA.KernelCache = t.TempDir()
	s, err := runtime.NewShared(runtime.Options{Config: &c, Backend: "cuda", HardLimit: "2GiB"})
	if err != nil {
		cudatest.Unavailable(t, err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	const tenants = 4
	rts := make([]*runtime.Runtime, tenants)
	for i := range rts {
		rc := c
		rts[i], err = runtime.New(runtime.Options{Config: &rc, Shared: s, HardLimit: "96MiB"})
		if err != nil {
			t.Fatal(err)
		}
	}
	const src = `extern "C" __global__ void stage(float *y, int n) {
		extern __shared__ float buf[];
		int i = blockIdx.x * blockDim.x + threadIdx.x;
		buf[threadIdx.x] = (float)i;
		__syncthreads();
		if (i < n) y[i] = buf[threadIdx.x] + 1.0f;
	}`
	var wg sync.WaitGroup
	errs := make(chan error, tenants)
	for i, rt := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- gpuTenant(rt, i, src)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, rt := range rts {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	}
	if st := s.Stats(); st.Used != 0 || st.LiveBlocks != 0 {
		t.Fatalf("shared pool after every runtime closed: %d bytes in %d live blocks (cuBLAS workspaces included)", st.Used, st.LiveBlocks)
	}
}

func gpuTenant(rt *runtime.Runtime, i int, src string) error {
	err := rt.DoString(fmt.Sprintf(`
		local cuda, kernels, pool = require("cuda"), require("kernels"), require("pool")
		local A = cuda.full({256, 128}, 1)
		local B = cuda.full({128, 64}, 2)
		local C = cuda.zeros({256, 64})
		for i = 1, 60 do
			local big = cuda.zeros({4 * 1024 * 1024})   -- 16 MiB, left to the GC
			kernels.fill(big, i)
			local x = cuda.rand({256, 256}, "float32", %d + i)
			assert(kernels.sum(big) == 4 * 1024 * 1024 * i)
			kernels.matmul(C, A, B)
			assert(kernels.sum(C) == 256 * 64 * 256, "matmul gave " .. kernels.sum(C))
			assert(pool.stats().used <= 96 * 1024 * 1024)
		end
		local ok, err = pcall(cuda.zeros, {25 * 1024 * 1024})
		assert(not ok and string.find(err, "hard limit 96.00 MiB", 1, true), err)
		cuda.synchronize()`, i*1000))
	if err != nil {
		return fmt.Errorf("runtime %d: %w", i, err)
	}
	k, err := rt.Compile(src, "stage", nil, nil)
	if err != nil {
		return err
	}
	const n = 256 * 64
	y, err := rt.Zeros([]int{n}, runtime.Float32)
	if err != nil {
		return err
	}
	sizes := []uint32{50 << 10, 64 << 10, 80 << 10, 96 << 10}
	for j := 0; j < 40; j++ {
		shared := sizes[(i+j)%len(sizes)]
		if err := k.Launch(runtime.LaunchConfig{Grid: [3]uint32{n / 256, 1, 1}, Block: [3]uint32{256, 1, 1}, Shared: shared}, y, float64(n)); err != nil {
			return fmt.Errorf("runtime %d: launch with %d bytes of shared memory: %w", i, shared, err)
		}
	}
	sum, err := rt.Sum(y)
	if err != nil {
		return err
	}
	if want := float64(n) * float64(n+1) / 2; sum != want {
		return fmt.Errorf("runtime %d: user kernel sum %v, want %v", i, sum, want)
	}
	return y.Free()
}
