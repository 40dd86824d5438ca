package runtime_test

import (
	"bytes"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// draw is what a call of the generator gave, as bytes.
func draw(t *testing.T, rt *runtime.Runtime, normal bool, shape []int, dt device.DType, seed *uint64) []byte {
	t.Helper()
	gen := rt.Rand
	if normal {
		gen = rt.RandN
	}
	a, err := gen(shape, dt, seed)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	return hostBytes(t, a)
}

// sequence is a script's worth of unseeded calls of both generators.
func sequence(t *testing.T, rt *runtime.Runtime) [][]byte {
	var out [][]byte
	for i, dt := range []device.DType{runtime.Float32, runtime.Float64, runtime.Float16, runtime.BFloat16} {
		out = append(out, draw(t, rt, i%2 == 1, []int{30, 7}, dt, nil), draw(t, rt, i%2 == 0, []int{5}, dt, nil))
	}
	return out
}

func sameSequence(a, b [][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func TestUnseededRuntimesDrawDifferentNumbers(t *testing.T) {
	a, b := newCPU(t, runtime.Options{}), newCPU(t, runtime.Options{})
	for _, normal := range []bool{false, true} {
		if bytes.Equal(draw(t, a, normal, []int{1000}, runtime.Float32, nil), draw(t, b, normal, []int{1000}, runtime.Float32, nil)) {
			t.Errorf("normal=%t: two fresh runtimes drew the same numbers", normal)
		}
	}
}

func TestSuccessiveUnseededCallsDiffer(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, normal := range []bool{false, true} {
		first := draw(t, rt, normal, []int{1000}, runtime.Float64, nil)
		if bytes.Equal(first, draw(t, rt, normal, []int{1000}, runtime.Float64, nil)) {
			t.Errorf("normal=%t: two calls drew the same numbers", normal)
		}
	}
}

func TestSeededRuntimesDrawTheSameSequence(t *testing.T) {
	a, b := newCPU(t, runtime.Options{}), newCPU(t, runtime.Options{})
	a.Seed(2024)
	b.Seed(2024)
	sa, sb := sequence(t, a), sequence(t, b)
	if !sameSequence(sa, sb) {
		t.Fatal("two runtimes seeded alike drew different sequences")
	}
	a.Seed(2024)
	if !sameSequence(sequence(t, a), sa) {
		t.Error("seeding again did not replay the sequence")
	}
	a.Seed(2025)
	if sameSequence(sequence(t, a), sa) {
		t.Error("another seed drew the same sequence")
	}
}

// An explicit seed gives what the first call after Seed(seed) gives, and
// leaves the runtime's sequence where it was.
func TestAnExplicitSeedIsTheSeedsFirstDrawAndLeavesTheSequence(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	seed := uint64(99)
	for _, normal := range []bool{false, true} {
		rt.Seed(seed)
		first := draw(t, rt, normal, []int{64}, runtime.Float32, nil)
		second := draw(t, rt, normal, []int{64}, runtime.Float32, nil)
		if !bytes.Equal(draw(t, rt, normal, []int{64}, runtime.Float32, &seed), first) {
			t.Errorf("normal=%t: an explicit seed differs from the first call after Seed", normal)
		}
		rt.Seed(seed)
		draw(t, rt, normal, []int{64}, runtime.Float32, nil)
		draw(t, rt, normal, []int{64}, runtime.Float32, &seed)
		if !bytes.Equal(draw(t, rt, normal, []int{64}, runtime.Float32, nil), second) {
			t.Errorf("normal=%t: a call with its own seed moved the runtime's sequence", normal)
		}
	}
}

func TestRandNRefusesIntegerDTypes(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	before := rt.LiveArrays()
	if _, err := rt.RandN([]int{4}, runtime.Int64, nil); err == nil || err.Error() != "randn needs a float dtype, got int64" {
		t.Errorf("RandN(int64): %v", err)
	}
	if rt.LiveArrays() != before {
		t.Error("a refused RandN left an array")
	}
}
