package jit

import (
	"fmt"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
)

// BenchmarkNVRTC times what a kernel's first launch waits for NVRTC to
// compile, with no kernel cache: a bare kernel, the same kernel after the
// prelude every generated source starts with, and the tiled matmul of
// docs/kernel-language.md as kernels.jit writes it. The difference between
// the first two is what the prelude costs each compile.
func BenchmarkNVRTC(b *testing.B) {
	const bare = `extern "C" __global__ void k(double* x) { x[0] = 1; }` + "\n"
	matmul := CUDA(mustTranslate(b, naiveMatmul, Signature{arr(device.Float32, 2), arr(device.Float32, 2), arr(device.Float32, 2)}, Options{}))
	be := cudatest.Load(b, cuda.Config{})
	for _, c := range []struct{ name, source string }{
		{"bare", bare},
		{"prelude", prelude + "\n" + bare},
		{"matmul", matmul},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				// a source never compiled before, though nothing caches
				m, err := be.Compile(c.source+fmt.Sprintf("// %d\n", i), "bench.cu", nil)
				if err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}
