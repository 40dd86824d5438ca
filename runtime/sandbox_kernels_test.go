package runtime_test

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

const sandboxKernelsScript = `
	local cuda, kernels = require("cuda"), require("kernels")
	local ok, err = pcall(kernels.compile, 'extern "C" __global__ void f(float *y) {}', "f")
	assert(not ok, "kernels.compile ran in the sandbox")
	assert(err:find("kernels.compile: raw CUDA C is disabled in the sandbox (Options.Sandbox)", 1, true), err)
	local A = cuda.zeros({8})
	k = kernels.jit(function(A, n) A[n + 1] = 1 end, {check_bounds = false})
	ok, err = pcall(k.launch, k, {grid = 1, block = 1}, A, 8)
	assert(not ok, "an index past the array's end ran")
	assert(err:find("index A[9] is out of bounds: A has shape (8)", 1, true), err)
	assert(A:to_table()[8] == 0)
	local B = cuda.zeros({1000})
	kernels.map(function(a, b) return a + b + 2 end, B, cuda.ones({1000}), 1)
	assert(kernels.sum(B) == 4000, kernels.sum(B))
`

// TestSandboxRefusesRawCUDAAndChecksKernelBounds: a sandboxed script
// cannot compile CUDA C (NVRTC would #include the host's files, a raw
// kernel reach any device memory), while its Lua kernels run with every
// index checked, whatever check_bounds says.
func TestSandboxRefusesRawCUDAAndChecksKernelBounds(t *testing.T) {
	rt := newCPU(t, runtime.Options{Sandbox: true})
	if err := rt.DoString(sandboxKernelsScript); err != nil {
		t.Fatal(err)
	}
	ud, ok := rt.Lua().GetGlobal("k").(*lua.LUserData)
	if !ok {
		t.Fatal("no kernel in k")
	}
	if k := ud.Value.(*runtime.JITKernel); !k.ChecksBounds() {
		t.Fatal("a sandboxed kernel is translated without bounds checks")
	}
	if !errors.Is(rt.UserCUDA(), runtime.ErrSandboxedCUDA) {
		t.Fatal("UserCUDA allows a sandboxed runtime's scripts raw CUDA C")
	}
	outside := newCPU(t, runtime.Options{})
	err := outside.DoString(`require("kernels").compile('extern "C" __global__ void f(float *y) {}', "f")`)
	if err == nil || !strings.Contains(err.Error(), "need the cuda backend") {
		t.Fatalf("kernels.compile outside the sandbox on the CPU: %v", err)
	}
}
