package runtime_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// deviceOf is a new device array holding elems, for a test.
// deviceOf uploads elems converted to dt as kernels.copy converts, so that
// values beyond an integer dtype's range saturate.
func deviceOf(t *testing.T, rt *runtime.Runtime, elems []float64, shape []int, dt runtime.DType) *runtime.Array {
	t.Helper()
	h, err := runtime.HostArrayFromFloats(elems, shape, runtime.Float64)
	if err == nil {
		h, err = h.Convert(dt)
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := rt.ToDevice(h)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// rows is a.Rows(i, j) for a test.
func rows(t *testing.T, a *runtime.Array, i, j int) *runtime.Array {
	t.Helper()
	v, err := a.Rows(i, j)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// shiftedAdd is NumPy's a[s:] += a[:-s] on a copy of a.
func shiftedAdd(a []float64, s int) []float64 {
	out := slices.Clone(a)
	for i := s; i < len(a); i++ {
		out[i] = a[i] + a[i-s]
	}
	return out
}

// A call whose output partly overlaps an input takes one temporary from
// the pool, counted in OverlapTemporaries and given back at once; a call
// on the same memory twice, or on views that share none, allocates
// nothing and counts nothing.
func TestOnlyPartlyOverlappingCallsTakeACountedTemporary(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n = 1000
		a := deviceOf(t, rt, count(n), []int{n}, runtime.Float32)
		if err := rt.SetGlobal("a", a); err != nil {
			t.Fatal(err)
		}
		// The map's kernel is translated (and on the GPU compiled) once,
		// before anything is counted.
		mapCall := `kernels.map(function(u, v) return u + v end, %s, %s, %s)`
		lua := func(format string, args ...any) {
			t.Helper()
			if err := rt.DoString(`local kernels = require("kernels") ` + fmt.Sprintf(format, args...)); err != nil {
				t.Fatal(err)
			}
		}
		lua(mapCall, "a", "a", "a")
		n0, bytes0 := rt.OverlapTemporaries()
		before := rt.Stats()
		live := rt.LiveArrays()

		same1, same2 := rows(t, a, 3, 800), rows(t, a, 3, 800)
		low, high := rows(t, a, 1, 500), rows(t, a, 501, 1000)
		for _, c := range []struct {
			what string
			call func() error
		}{
			{"add(a, a)", func() error { return rt.Add(a, a) }},
			{"add of one view made twice", func() error { return rt.Add(same1, same2) }},
			{"copy of one view made twice", func() error { return rt.Copy(same1, same2) }},
			{"copy_from of one view made twice", func() error { return same1.CopyFromDevice(same2) }},
			{"add of disjoint views", func() error { return rt.Add(low, high) }},
			{"copy of disjoint views", func() error { return rt.Copy(high, low) }},
			{"map of a into a", func() error { lua(mapCall, "a", "a", "a"); return nil }},
			{"map of disjoint views", func() error {
				lua(mapCall, "a:rows(1, 500)", "a:rows(501, 1000)", "a:rows(1, 500)")
				return nil
			}},
		} {
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
			if k, nbytes := rt.OverlapTemporaries(); k != n0 || nbytes != bytes0 {
				t.Errorf("%s took %d temporaries of %d bytes; want none", c.what, k-n0, nbytes-bytes0)
			}
			if s := rt.Stats(); s.Allocations != before.Allocations {
				t.Errorf("%s allocated %d times; want no allocation", c.what, s.Allocations-before.Allocations)
			}
		}

		start := values(t, a)
		if err := rt.Add(rows(t, a, 2, n), rows(t, a, 1, n-1)); err != nil {
			t.Fatal(err)
		}
		if got, want := values(t, a), shiftedAdd(start, 1); !slices.Equal(got, want) {
			t.Errorf("a[1:] += a[:-1] gave %v..., want %v...", got[:6], want[:6])
		}
		if err := rt.Copy(rows(t, a, 1, n-7), rows(t, a, 8, n)); err != nil {
			t.Fatal(err)
		}
		if err := rows(t, a, 8, n).CopyFromDevice(rows(t, a, 1, n-7)); err != nil {
			t.Fatal(err)
		}
		lua(mapCall, "a:rows(1, 990)", "a:rows(1, 990)", "a:rows(11, 1000)")
		k, nbytes := rt.OverlapTemporaries()
		if want := uint64(4 * (n - 1 + n - 7 + n - 7 + n - 10)); k-n0 != 4 || nbytes-bytes0 != want {
			t.Errorf("four partly overlapping calls took %d temporaries of %d bytes; want 4 of %d", k-n0, nbytes-bytes0, want)
		}
		if s := rt.Stats(); s.Used != before.Used || rt.LiveArrays() != live {
			t.Errorf("after the calls %d bytes are used by %d arrays; want %d by %d, as before", s.Used, rt.LiveArrays(), before.Used, live)
		}
		if r := rt.Report(); !strings.Contains(r, "Overlap temporaries: 4 (") {
			t.Errorf("the report does not count the temporaries:\n%s", r)
		}
	})
}

// Under a hard limit that leaves no room for the temporary, a partly
// overlapping call is an error that names the arrays, how they overlap and
// why there is no temporary, and leaves every array as it was; the same
// call runs once the limit allows it.
func TestAnOverlapTemporaryThatDoesNotFitIsRefusedAndNoArrayChanges(t *testing.T) {
	eachBackendWith(t, runtime.Options{HardLimit: "10MiB"}, func(t *testing.T, rt *runtime.Runtime) {
		const n = 6 << 20 / 4
		a := deviceOf(t, rt, count(n), []int{n}, runtime.Float32)
		if err := rt.SetGlobal("a", a); err != nil {
			t.Fatal(err)
		}
		start := values(t, a)
		n0, _ := rt.OverlapTemporaries()
		for _, c := range []struct {
			what, want string
			call       func() error
		}{
			{"add", "x (shape 1572863) partly overlaps y (shape 1572863): x starts 1 element before y, and they share 1572862 elements; " +
				"reading x before y is written needs a temporary array of 6.0 MiB, which does not fit, so no array was changed: out of ",
				func() error { return rt.Add(rows(t, a, 2, n), rows(t, a, 1, n-1)) }},
			{"copy", "src (shape 1572861) partly overlaps dst (shape 1572861): src starts 3 elements after dst, and they share 1572858 elements",
				func() error { return rt.Copy(rows(t, a, 1, n-3), rows(t, a, 4, n)) }},
			{"copy_from", "source (shape 1572861) partly overlaps array (shape 1572861): source starts 3 elements before array",
				func() error { return rows(t, a, 4, n).CopyFromDevice(rows(t, a, 1, n-3)) }},
			{"map", "kernels.map: argument 2 (v) (shape 1572862) partly overlaps out (shape 1572862): argument 2 (v) starts 2 elements after out",
				func() error {
					return rt.DoString(`require("kernels").map(function(u, v) return u + v end, a:rows(1, #a - 2), a:rows(1, #a - 2), a:rows(3, #a))`)
				}},
		} {
			err := c.call()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "hard limit") {
				t.Errorf("%s: got %v\nwant an error containing %q and the hard limit", c.what, err, c.want)
			}
			if c.what != "map" && !errors.Is(err, device.ErrOutOfMemory) {
				t.Errorf("%s: %v is not an out-of-memory error", c.what, err)
			}
			if got := values(t, a); !slices.Equal(got, start) {
				t.Fatalf("%s changed the array", c.what)
			}
		}
		if k, _ := rt.OverlapTemporaries(); k != n0 {
			t.Errorf("refused calls counted %d temporaries", k-n0)
		}
		if err := rt.SetLimits(runtime.LimitChange{}, runtime.LimitChange{Set: true}); err != nil {
			t.Fatal(err)
		}
		if err := rt.Add(rows(t, a, 2, n), rows(t, a, 1, n-1)); err != nil {
			t.Fatal(err)
		}
		if got, want := values(t, a), shiftedAdd(start, 1); !slices.Equal(got, want) {
			t.Errorf("without the limit a[1:] += a[:-1] gave %v..., want %v...", got[:6], want[:6])
		}
	})
}

// A partly overlapping call captured in a graph reads its inputs first on
// every launch: the temporary is the graph's until the graph is freed,
// and then goes back to the pool.
func TestAnOverlappingCallInAGraphReadsItsInputsFirstOnEveryLaunch(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		const n = 100000
		a := deviceOf(t, rt, count(n), []int{n}, runtime.Float32)
		start := values(t, a)
		// A first capture makes its stream's cuBLAS workspace, which the
		// runtime keeps: the baseline is taken after one.
		warm, err := rt.Capture(func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := warm.Free(); err != nil {
			t.Fatal(err)
		}
		used := rt.Stats().Used
		g, err := rt.Capture(func() error { return rt.Add(rows(t, a, 4, n), rows(t, a, 1, n-3)) })
		if err != nil {
			t.Fatal(err)
		}
		want := start
		for range 2 {
			if err := g.Launch(); err != nil {
				t.Fatal(err)
			}
			want = shiftedAdd(want, 3)
		}
		if got := values(t, a); !slices.Equal(got, want) {
			t.Errorf("two launches of a[3:] += a[:-3] gave %v..., want %v...", got[:8], want[:8])
		}
		if err := g.Free(); err != nil {
			t.Fatal(err)
		}
		if err := rt.Synchronize(); err != nil {
			t.Fatal(err)
		}
		if s := rt.Stats(); s.Used != used {
			t.Errorf("after the graph is freed %d bytes are used; want %d, as before it", s.Used, used)
		}
	})
}

// kernels.matmul refuses an output that shares memory with an input,
// partly as well as wholly: a product cannot be written in place.
func TestMatmulRefusesAnOutputThatPartlyOverlapsAnInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		a := deviceOf(t, rt, count(32), []int{8, 4}, runtime.Float32)
		b := deviceOf(t, rt, count(16), []int{4, 4}, runtime.Float32)
		start := values(t, a)
		err := rt.Matmul(rows(t, a, 1, 4), rows(t, a, 3, 6), b, runtime.MatmulOptions{})
		if err == nil || !strings.Contains(err.Error(), "C shares memory with an input") {
			t.Errorf("C = a[0:4], A = a[2:6]: got %v", err)
		}
		err = rt.Matmul(rows(t, a, 5, 8), b, rows(t, a, 3, 6), runtime.MatmulOptions{})
		if err == nil || !strings.Contains(err.Error(), "C shares memory with an input") {
			t.Errorf("C = a[4:8], B = a[2:6]: got %v", err)
		}
		if got := values(t, a); !slices.Equal(got, start) {
			t.Error("a refused matmul changed C")
		}
	})
}
