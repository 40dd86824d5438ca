package kernels

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestElementwiseTableEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	usesY := regexp.MustCompile(`\by\b`)
	for _, op := range ElementwiseOps() {
		if seen[op.Name] {
			t.Errorf("%s: two entries of that name", op.Name)
		}
		seen[op.Name] = true
		if LookupElementwise(op.Name) != op {
			t.Errorf("%s: LookupElementwise does not find it", op.Name)
		}
		if op.Arrays != 1 && op.Arrays != 2 || op.CUDA == "" || op.Go == nil {
			t.Errorf("%s: Arrays %d, CUDA %q, Go set %t", op.Name, op.Arrays, op.CUDA, op.Go != nil)
		}
		if (op.IntCUDA == "") != (op.IntGo == nil) {
			t.Errorf("%s: IntCUDA %q and IntGo set %t: both or neither", op.Name, op.IntCUDA, op.IntGo != nil)
		}
		l := op.loops
		if l.f32 == nil || l.f64 == nil || l.i32 == nil || l.i64 == nil || l.u8 == nil {
			t.Errorf("%s: no generated loops; run go generate ./kernels", op.Name)
		}
		if op.Arrays == 1 {
			if usesY.MatchString(op.CUDA) || usesY.MatchString(op.IntCUDA) {
				t.Errorf("%s: a one-array kernel's CUDA uses y: %s, %s", op.Name, op.CUDA, op.IntCUDA)
			}
			if a, b := op.Go(0, 3, 2), op.Go(7, 3, 2); a != b {
				t.Errorf("%s: a one-array kernel's Go depends on y: %v, %v", op.Name, a, b)
			}
			if op.IntGo != nil && op.IntGo(0, 3, 2) != op.IntGo(7, 3, 2) {
				t.Errorf("%s: a one-array kernel's IntGo depends on y", op.Name)
			}
		}
	}
	if LookupElementwise("no_such_kernel") != nil {
		t.Error("LookupElementwise found a kernel that is not in the table")
	}
}

// stored is v as an element of dt holds it.
func stored(dt device.DType, v float64) float64 {
	b := make([]byte, dt.Size())
	device.Set(dt, b, 0, v)
	return device.Get(dt, b, 0)
}

// TestEveryElementwiseOpMatchesItsGoFunction runs each kernel of the table
// on every float dtype against its own Go function evaluated in float64:
// equal for float64, and within the rounding of the compute and stored
// types for the others, whose loops go generate derived from the
// function. The integer dtypes are held to NumPy instead
// (TestIntegerKernelsMatchNumPyNearTheLimits).
func TestEveryElementwiseOpMatchesItsGoFunction(t *testing.T) {
	rng := newRand(t)
	for _, op := range ElementwiseOps() {
		for _, dt := range floatDTypes {
			for _, n := range []int{1, 7, 300, 4099} {
				for _, unaligned := range []bool{false, true} {
					y := randomArray(rng, dt, n, unaligned)
					x := randomArray(rng, dt, n, !unaligned)
					a := (rng.Float64()*2 - 1) * 3
					y0, x0 := load(dt, y), load(dt, x)
					if op.Arrays == 1 {
						x = nil
					}
					op.Apply(dt, y, a, x)
					if x != nil && fmt.Sprint(load(dt, x)) != fmt.Sprint(x0) {
						t.Fatalf("%s %s: the source array changed", op.Name, dt)
					}
					what := fmt.Sprintf("%s %s n=%d unaligned=%t a=%v", op.Name, dt, n, unaligned, a)
					checkAgainstGo(t, op, dt, what, load(dt, y), y0, x0, a)
				}
			}
		}
	}
}

func checkAgainstGo(t *testing.T, op *ElementwiseOp, dt device.DType, what string, got, y0, x0 []float64, a float64) {
	t.Helper()
	for i := range got {
		yv, xv := y0[i], x0[i]
		if op.Arrays == 1 {
			yv, xv = 0, y0[i]
		}
		want := op.Go(yv, xv, a)
		switch {
		case got[i] == stored(dt, want), math.IsNaN(got[i]) && math.IsNaN(want):
			continue // exact, or an overflow to infinity in dt
		case dt == device.Float64:
			t.Fatalf("%s: [%d] = %v, want %v from y=%v x=%v", what, i, got[i], stored(dt, want), yv, xv)
		}
		// Each rounding errs by at most unitRoundoff of the magnitude of
		// what it rounds: the operands, a's product and the result.
		scale := math.Abs(yv) + math.Abs(xv)*max(1, math.Abs(a)) + math.Abs(want)
		tol := 3*unitRoundoff[dt]*scale + smallestStep[dt]
		if d := math.Abs(got[i] - want); !(d <= tol) {
			t.Fatalf("%s: [%d] = %v, want %v from y=%v x=%v (error %g, allowed %g)", what, i, got[i], want, yv, xv, d, tol)
		}
	}
}

func TestElementwiseMisuseNamesTheKernel(t *testing.T) {
	for _, op := range ElementwiseOps() {
		func() {
			defer func() {
				msg, _ := recover().(string)
				want := "kernels." + op.goName + ": 6 bytes is not a whole number of float32 elements"
				if !strings.Contains(msg, want) {
					t.Errorf("%s: panic %q, want one containing %q", op.Name, msg, want)
				}
			}()
			op.Apply(device.Float32, make([]byte, 6), 1, make([]byte, 6))
		}()
	}
}

// randomScalar is a number for a kernel on dt: any float for a float
// dtype, an integer for an integer one, as the kernels require.
func randomScalar(rng *rand.Rand, dt device.DType) float64 {
	if dt.IsFloat() {
		return (rng.Float64()*2 - 1) * 3
	}
	return intScalars[rng.IntN(len(intScalars))]
}

// The operators write a kernel's result into a new array: ApplyTo must
// give the bits Apply gives in place, and leave its operands alone.
func TestApplyToEqualsApplyAndLeavesTheOperands(t *testing.T) {
	rng := newRand(t)
	for _, op := range ElementwiseOps() {
		for _, dt := range device.DTypes {
			for _, n := range []int{1, 7, 300, 4099} {
				for _, unaligned := range []bool{false, true} {
					y := randomArray(rng, dt, n, false)
					x := randomArray(rng, dt, n, false)
					if op.Arrays == 1 {
						x = nil
					}
					a := randomScalar(rng, dt)
					y0, x0 := bytes.Clone(y), bytes.Clone(x)
					out := randomArray(rng, dt, n, unaligned)
					op.ApplyTo(dt, out, y, a, x)
					want := bytes.Clone(y)
					op.Apply(dt, want, a, x0)
					what := fmt.Sprintf("%s %s n=%d unaligned out=%t", op.Name, dt, n, unaligned)
					if !bytes.Equal(y, y0) || !bytes.Equal(x, x0) {
						t.Fatalf("%s: an operand changed", what)
					}
					if !bytes.Equal(out, want) {
						t.Fatalf("%s: ApplyTo gave %v, Apply in place %v", what, load(dt, out), load(dt, want))
					}
				}
			}
		}
	}
}

// An integer dtype's kernels take integers below 2^63 in magnitude; any
// other number is a caller's mistake (the runtime refuses it first), a
// panic naming the kernel, the number and the dtype rather than a
// truncated number.
func TestIntegerKernelsRefuseANumberThatIsNotAnInteger(t *testing.T) {
	for _, a := range []float64{0.5, -2.25, math.NaN(), math.Inf(1), math.Inf(-1), 0x1p63, -0x1p63, 1e300} {
		for _, dt := range intDTypes {
			for _, op := range ElementwiseOps() {
				if op.Scalar == "" {
					op.Apply(dt, make([]byte, dt.Size()), a, make([]byte, dt.Size())) // a is ignored
					continue
				}
				func() {
					defer func() {
						msg, _ := recover().(string)
						want := fmt.Sprintf("kernels.%s: %s %v is not an integer of magnitude below 2^63, which %s needs", op.goName, op.Scalar, a, dt)
						if msg != want {
							t.Errorf("%s %s a=%v: panic %q, want %q", op.Name, dt, a, msg, want)
						}
					}()
					op.Apply(dt, make([]byte, dt.Size()), a, make([]byte, dt.Size()))
				}()
			}
		}
	}
	for _, a := range []float64{0, -0x1p63 + 1024, 0x1p63 - 1024, 1e18, -3} {
		if v, ok := IntegerScalar(a); !ok || float64(v) != a {
			t.Errorf("IntegerScalar(%v) = %d, %t", a, v, ok)
		}
	}
}
