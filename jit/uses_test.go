package jit

import (
	"slices"
	"testing"

	"github.com/gluaproject/glua/device"
)

// ArrayAccess finds, for each parameter, whether the kernel reads its
// array's elements and whether it writes them: loads read, stores write,
// atomics do both, wherever they are (a branch, a loop, a math
// function's argument), and an array only measured, or a number, is
// neither.
func TestArrayAccessFindsWhatAKernelReadsAndWrites(t *testing.T) {
	src := `return function(x, y, counter, shape_only, n, z)
		local i = kernels.grid(1)
		if i > #shape_only or i > n then return end
		for k = 1, 2 do
			y[i] = math.abs(x[i]) + k
		end
		while false do z[i] = 0 end
		local old = kernels.atomic_add(counter, 1, 1)
	end`
	f32 := arr(device.Float32, 1)
	p := mustTranslate(t, src, Signature{f32, f32, arr(device.Int64, 1), f32, intArg, f32}, Options{})
	reads, writes := p.ArrayAccess()
	wantReads := []bool{true, false, true, false, false, false}
	wantWrites := []bool{false, true, true, false, false, true}
	if !slices.Equal(reads, wantReads) || !slices.Equal(writes, wantWrites) {
		t.Errorf("reads %v, writes %v; want %v and %v", reads, writes, wantReads, wantWrites)
	}
}
