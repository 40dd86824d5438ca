package bindings_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/internal/numpytest"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/npy"
	"github.com/gluaproject/glua/runtime"
)

// overlapCase is one call on views of a, a 1-D array of random nonzero
// elements, written in Lua and in NumPy; afterwards a, and the new array
// c where the call makes one, must hold what NumPy's do.
type overlapCase struct {
	Name  string `json:"name"`
	NumPy string `json:"numpy"` // with np and a (an ndarray) in scope; may set c
	lua   string // with kernels and a (a DeviceArray) in scope; may set c
	dtype runtime.DType
	data  []float64
	tol   float64 // largest relative error per element; 0 asks for the same values
}

// views are the pairs of same-sized views of a, n elements long, that
// the cases call with: the output y first, then the input x, in Lua and
// in NumPy.
type viewPair struct{ kind, luaY, luaX, npY, npX string }

// overlappingViews are y and x for a shift of s elements forward
// (NumPy's a[s:] op= a[:-s]) and backward, exact aliasing of one view
// made twice and of the whole array, and two views that share nothing.
func overlappingViews(n, s int) []viewPair {
	m := n / 2
	return []viewPair{
		{fmt.Sprintf("forward %d", s), fmt.Sprintf("a:rows(%d, %d)", s+1, n), fmt.Sprintf("a:rows(1, %d)", n-s), fmt.Sprintf("a[%d:]", s), fmt.Sprintf("a[:%d]", n-s)},
		{fmt.Sprintf("backward %d", s), fmt.Sprintf("a:rows(1, %d)", n-s), fmt.Sprintf("a:rows(%d, %d)", s+1, n), fmt.Sprintf("a[:%d]", n-s), fmt.Sprintf("a[%d:]", s)},
		{"same view", fmt.Sprintf("a:rows(%d, %d)", s+1, n), fmt.Sprintf("a:rows(%d, %d)", s+1, n), fmt.Sprintf("a[%d:]", s), fmt.Sprintf("a[%d:]", s)},
		{"whole array", "a", "a", "a", "a"},
		{"disjoint", fmt.Sprintf("a:rows(1, %d)", m), fmt.Sprintf("a:rows(%d, %d)", m+1, 2*m), fmt.Sprintf("a[:%d]", m), fmt.Sprintf("a[%d:%d]", m, 2*m)},
	}
}

// numpyElementwise is each kernel of kernels.ElementwiseOps in NumPy, with
// Y the output view, X the input view and A the number as NumPy's scalar
// of the dtype. NumPy reads overlapping inputs before it writes
// (since 1.13), which is the rule glua follows.
var numpyElementwise = map[string]string{
	"scale":      "Y *= A",
	"axpy":       "Y += A * X",
	"add":        "Y += X",
	"mul":        "Y *= X",
	"sub":        "Y -= X",
	"div":        "Y /= X",
	"add_scalar": "Y += A",
	"div_scalar": "Y /= A",
	"rsub":       "Y[...] = A - Y",
	"rdiv":       "Y[...] = A / Y",
	"maximum":    "np.maximum(Y, X, out=Y)",
	"minimum":    "np.minimum(Y, X, out=Y)",
}

// exactInt32 are the kernels and operators whose int32 results are exact
// on the small integers of the int32 cases, in every way of computing
// them.
var exactInt32 = map[string]bool{"add": true, "sub": true, "mul": true, "maximum": true, "minimum": true,
	"copy": true, "copy_from": true, "+": true, "-": true, "*": true}

// tolerance is the largest relative error each dtype's cases allow: a
// rounding or two apart, far below what reading a written element gives.
var tolerance = map[runtime.DType]float64{runtime.Float32: 1e-6, runtime.Float64: 1e-14, runtime.Int32: 0}

// overlapCases are the calls of the test: every elementwise kernel, every
// operator of two arrays, kernels.copy, copy_from, kernels.map and
// kernels.map_reduce with out, on every pair of views, for float32,
// float64 and (where exact) int32, on data drawn from rng.
func overlapCases(t *testing.T, rng *rand.Rand) []overlapCase {
	var cases []overlapCase
	add := func(c overlapCase, dt runtime.DType, n int, positive bool) {
		c.dtype, c.data, c.tol = dt, randomElements(rng, dt, n, positive), tolerance[dt]
		cases = append(cases, c)
	}
	for _, dt := range []runtime.DType{runtime.Float32, runtime.Float64, runtime.Int32} {
		np := "np." + dt.String()
		sized := func() (n, s int) {
			n = 2 + rng.IntN(3000)
			if dt == runtime.Float32 && rng.IntN(2) == 0 {
				// Large enough that on the GPU many blocks would read what
				// others had written.
				n = 1<<17 + rng.IntN(5000)
			}
			s = 1 + rng.IntN(n-1)
			if rng.IntN(2) == 0 {
				s = 1 + rng.IntN(min(8, n-1))
			}
			return n, s
		}
		for _, op := range kernels.ElementwiseOps() {
			ref, ok := numpyElementwise[op.Name]
			if !ok {
				t.Errorf("kernels.%s has no NumPy reference: add it to numpyElementwise", op.Name)
				continue
			}
			if dt == runtime.Int32 && !exactInt32[op.Name] {
				continue
			}
			n, s := sized()
			a := []float64{1.25, -0.75, 3}[rng.IntN(3)]
			for _, v := range overlappingViews(n, s) {
				if op.Arrays == 1 && v.luaX != v.luaY {
					continue // one array: it can only be the output itself
				}
				args := []string{v.luaY}
				if op.Scalar != "" {
					args = append(args, fmt.Sprint(a))
				}
				if op.Arrays == 2 {
					args = append(args, v.luaX)
				}
				r := strings.NewReplacer("Y", v.npY, "X", v.npX, "A", fmt.Sprintf("%s(%v)", np, a))
				add(overlapCase{Name: fmt.Sprintf("kernels.%s %s %s of %d", op.Name, dt, v.kind, n),
					lua: fmt.Sprintf("kernels.%s(%s)", op.Name, strings.Join(args, ", ")), NumPy: r.Replace(ref)}, dt, n, false)
			}
		}
		n, s := sized()
		for _, v := range overlappingViews(n, s) {
			add(overlapCase{Name: fmt.Sprintf("kernels.copy %s %s of %d", dt, v.kind, n),
				lua: fmt.Sprintf("kernels.copy(%s, %s)", v.luaY, v.luaX), NumPy: fmt.Sprintf("%s[...] = %s", v.npY, v.npX)}, dt, n, false)
			add(overlapCase{Name: fmt.Sprintf("copy_from %s %s of %d", dt, v.kind, n),
				lua: fmt.Sprintf("%s:copy_from(%s)", v.luaY, v.luaX), NumPy: fmt.Sprintf("%s[...] = %s", v.npY, v.npX)}, dt, n, false)
		}
		for _, op := range []string{"+", "-", "*", "/"} {
			if dt == runtime.Int32 && !exactInt32[op] {
				continue
			}
			n, s := sized()
			for _, v := range overlappingViews(n, s) {
				add(overlapCase{Name: fmt.Sprintf("operator %s %s %s of %d", op, dt, v.kind, n),
					lua: fmt.Sprintf("c = %s %s %s", v.luaY, op, v.luaX), NumPy: fmt.Sprintf("c = %s %s %s", v.npY, op, v.npX)}, dt, n, false)
			}
		}
		if dt == runtime.Int32 {
			continue
		}
		n, s = sized()
		for _, v := range overlappingViews(n, s) {
			add(overlapCase{Name: fmt.Sprintf("kernels.map of two %s %s of %d", dt, v.kind, n),
				lua:   fmt.Sprintf("kernels.map(function(u, v) return u * 2 + v end, %s, %s, %s)", v.luaY, v.luaY, v.luaX),
				NumPy: fmt.Sprintf("%s[...] = %s * 2 + %s", v.npY, v.npY, v.npX)}, dt, n, false)
			add(overlapCase{Name: fmt.Sprintf("kernels.map of one %s %s of %d", dt, v.kind, n),
				lua:   fmt.Sprintf("kernels.map(function(v) return v * 3 end, %s, %s)", v.luaY, v.luaX),
				NumPy: fmt.Sprintf("%s[...] = %s * 3", v.npY, v.npX)}, dt, n, false)
		}
		axisCases(rng, dt, add)
	}
	return cases
}

// axisCases adds kernels.map_reduce along an axis of x, the first m·k
// elements of a as an m×k matrix, into out, a run of a's elements that
// starts inside x (partly overlapping it), is x itself (one column), or
// lies past it. The data is positive, so that a sum loses nothing to
// cancellation and float32's tolerance holds for it.
func axisCases(rng *rand.Rand, dt runtime.DType, add func(overlapCase, runtime.DType, int, bool)) {
	for _, op := range []struct{ lua, np string }{{"sum", "sum"}, {"max", "max"}} {
		m, k := 1+rng.IntN(64), 1+rng.IntN(64)
		n := m*k + max(m, k) + rng.IntN(10)
		x := fmt.Sprintf("a:rows(1, %d):reshape({%d, %d})", m*k, m, k)
		npx := fmt.Sprintf("a[:%d].reshape(%d, %d).astype(np.float64)", m*k, m, k)
		for _, c := range []struct {
			kind          string
			axis, results int
			start         int
		}{
			{"per row, inside x", 2, m, rng.IntN(m * k)},
			{"per column, inside x", 1, k, rng.IntN(m * k)},
			{"per row, past x", 2, m, m * k},
		} {
			add(overlapCase{Name: fmt.Sprintf("kernels.map_reduce %s %s %s of %dx%d, out from %d", op.lua, dt, c.kind, m, k, c.start),
				lua: fmt.Sprintf("kernels.map_reduce(function(v) return v end, %q, %s, {axis = %d, out = a:rows(%d, %d)})",
					op.lua, x, c.axis, c.start+1, c.start+c.results),
				NumPy: fmt.Sprintf("a[%d:%d] = %s.%s(axis=%d)", c.start, c.start+c.results, npx, op.np, c.axis-1)}, dt, n, true)
		}
	}
	m := 1 + rng.IntN(500)
	add(overlapCase{Name: fmt.Sprintf("kernels.map_reduce %s into its own single column of %d", dt, m),
		lua:   fmt.Sprintf("kernels.map_reduce(function(v) return v * 2 end, \"sum\", a:rows(1, %d):reshape({%d, 1}), {axis = 2, out = a:rows(1, %d)})", m, m, m),
		NumPy: fmt.Sprintf("a[:%d] = a[:%d] * 2", m, m)}, dt, m, true)
}

// randomElements are n elements of dt, never zero: magnitudes in [0.5, 2)
// with random signs for floats (positive when asked), integers in ±[1, 50].
func randomElements(rng *rand.Rand, dt runtime.DType, n int, positive bool) []float64 {
	v := make([]float64, n)
	for i := range v {
		if dt == runtime.Int32 {
			v[i] = float64(1 + rng.IntN(50))
		} else {
			v[i] = 0.5 + 1.5*rng.Float64()
		}
		if !positive && rng.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

// The overlap rule against NumPy: every elementwise kernel, operator,
// kernels.copy, copy_from, kernels.map and kernels.map_reduce with out,
// called on views of one array shifted forwards and backwards by random
// amounts, on the same memory and on disjoint views, gives NumPy's
// results for the same call, on every backend.
func TestOverlappingViewsGiveNumPysResults(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GLUA_OVERLAP_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("GLUA_OVERLAP_SEED=%q: %v", s, err)
		}
	}
	cases := overlapCases(t, rand.New(rand.NewPCG(seed, 29)))
	t.Logf("%d cases from seed %d (GLUA_OVERLAP_SEED=%d draws them again)", len(cases), seed, seed)
	dir := t.TempDir()
	for i, c := range cases {
		h, err := runtime.HostArrayFromFloats(c.data, []int{len(c.data)}, c.dtype)
		if err != nil {
			t.Fatal(err)
		}
		if err := npy.WriteFile(filepath.Join(dir, fmt.Sprintf("in%d.npy", i)), npy.Header{DType: c.dtype, Shape: h.Shape()}, h.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), spec, 0o644); err != nil {
		t.Fatal(err)
	}
	// The temporaries come from the pool: on the GPU, also from the
	// driver's own allocations and its stream-ordered pool.
	runs := backendRuns(t)
	cpuReference := false
	if _, err := numpytest.Find(); err != nil && !numpytest.Required() && len(runs) > 1 {
		// A GPU machine without NumPy still checks the GPU: against the
		// CPU backend, whose results this test checks against NumPy
		// wherever NumPy is.
		t.Logf("%v: checking the GPU against the CPU backend's results instead", err)
		cpuReference = true
	} else {
		numpytest.Run(t, `
import json, sys
import numpy as np
d = sys.argv[1]
for i, case in enumerate(json.load(open(d + "/cases.json"))):
    scope = {"np": np, "a": np.load("%s/in%d.npy" % (d, i))}
    exec(case["numpy"], scope)
    np.save("%s/a%d.npy" % (d, i), scope["a"])
    if "c" in scope:
        np.save("%s/c%d.npy" % (d, i), scope["c"])
`, dir)
	}
	for k, r := range runs {
		save := cpuReference && k == 0
		t.Run(r.backend+"/"+r.strategy, func(t *testing.T) {
			rt, err := runtime.New(runtime.Options{Backend: r.backend, MemoryPool: r.strategy, Config: defaultConfig(), CPUMemory: "1GiB"})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			failed := 0
			for i, c := range cases {
				if err := runOverlapCase(rt, dir, i, c, save); err != nil {
					t.Errorf("%s: %s\n  glua:  %s\n  NumPy: %s", c.Name, err, c.lua, c.NumPy)
					if failed++; failed == 10 {
						t.Fatal("stopping after 10 failures")
					}
				}
			}
		})
		if t.Failed() && save {
			t.Fatal("the CPU backend's run, the GPU's reference, failed")
		}
	}
}

// runOverlapCase runs case i on rt and compares a, and c if the call
// made one, with NumPy's; with save, it writes them where NumPy's would
// be, the reference for the runs after it.
func runOverlapCase(rt *runtime.Runtime, dir string, i int, c overlapCase, save bool) error {
	h, err := runtime.HostArrayFromFloats(c.data, []int{len(c.data)}, c.dtype)
	if err != nil {
		return err
	}
	a, err := rt.ToDevice(h)
	if err != nil {
		return err
	}
	defer a.Free()
	if err := rt.SetGlobal("a", a); err != nil {
		return err
	}
	if err := rt.SetGlobal("c", nil); err != nil {
		return err
	}
	if err := rt.DoString(`local kernels = require("kernels") ` + c.lua); err != nil {
		return err
	}
	result := func(x *runtime.Array, name string) error {
		path := filepath.Join(dir, fmt.Sprintf("%s%d.npy", name, i))
		if save {
			return rt.SaveNPY(path, x)
		}
		if err := compareWithNumPy(rt, x, path, c.tol); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := result(a, "a"); err != nil {
		return err
	}
	v, err := rt.Global("c")
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	made, ok := v.(*runtime.Array)
	if !ok {
		return fmt.Errorf("c is %T, not a DeviceArray", v)
	}
	defer made.Free()
	return result(made, "c")
}

// compareWithNumPy compares got's elements with those of the .npy file
// want, within tol relative to each (the same values when tol is 0).
func compareWithNumPy(rt *runtime.Runtime, got *runtime.Array, want string, tol float64) error {
	g, err := got.Float64s()
	if err != nil {
		return err
	}
	h, err := rt.LoadNPY(want, runtime.NPYOptions{})
	if err != nil {
		return err
	}
	w := h.Floats()
	if len(g) != len(w) {
		return fmt.Errorf("%d elements, NumPy's %d", len(g), len(w))
	}
	bad, first := 0, -1
	for i := range w {
		if g[i] != w[i] && !(math.Abs(g[i]-w[i]) <= tol*math.Abs(w[i])) {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ from NumPy's; the first, [%d], is %v where NumPy has %v", bad, len(w), first, g[first], w[first])
	}
	return nil
}
