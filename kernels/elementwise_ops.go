package kernels

import (
	"slices"
	"strings"
)

//go:generate go run ./internal/elementwisegen

// ElementwiseOp is a built-in in-place kernel whose every result element
// depends only on the elements in the same place of its one or two arrays
// and on a number. Its entry in elementwiseOps is the whole of it: the CUDA
// entry points, the Go loops the CPU backend runs, the runtime's
// Elementwise and the Lua function kernels.<Name> all follow from it.
//
// Every implementation computes as doc.go says: in C, the dtype's compute
// type (float64 for float64 and the integer dtypes, float32 for the
// others), with a rounded to C first, and the result stored as device.Set
// stores it.
type ElementwiseOp struct {
	// Name is the Lua function kernels.<Name> and the stem of the CUDA
	// entry points glua_<Name>_<dtype>.
	Name string
	// Arrays is 1 for a kernel that rewrites its one array x from x and a,
	// called kernels.<Name>(x[, a]); 2 for one that rewrites y from y, x and
	// a, called kernels.<Name>(y[, a], x).
	Arrays int
	// Scalar is what the number a is called in messages; "" for a kernel
	// that takes none (it then sees a = 0).
	Scalar string
	// CUDA is the new element as a C++ expression of type C in y, x and a,
	// all of type C (a one-array kernel has no y). Products, sums,
	// differences and quotients are spelled mul_rn, add_rn, sub_rn and
	// div_rn (dtypes.cu), so that each rounds once, as in Go.
	CUDA string
	// Go is the same in float64, the compute type of float64 and the
	// integer dtypes (a one-array kernel gets its element as x, and y = 0).
	// go generate writes loops that run its body with C in place of
	// float64, so it may use only operators, conversions and functions
	// generic in the float type: a conversion float64(·) is then a rounding
	// to C, and keeps Go from fusing a product into a sum.
	Go func(y, x, a float64) float64

	loops  elementwiseLoops // from elementwise_loops.go, by Name
	goName string           // Name as a Go function's: messages say kernels.Axpy
}

// elementwiseOps is the table of elementwise kernels; a kernel added here
// is a Lua function, on both backends, after go generate, and wants its
// entry in docs/lua-api.md (the bindings tests say which is missing).
var elementwiseOps = []*ElementwiseOp{
	{Name: "scale", Arrays: 1, Scalar: "factor",
		CUDA: "mul_rn(x, a)",
		Go:   func(_, x, a float64) float64 { return x * a }},
	{Name: "axpy", Arrays: 2, Scalar: "a",
		CUDA: "add_rn(mul_rn(a, x), y)",
		Go:   func(y, x, a float64) float64 { return float64(a*x) + y }},
	{Name: "add", Arrays: 2,
		CUDA: "add_rn(y, x)",
		Go:   func(y, x, _ float64) float64 { return y + x }},
	{Name: "mul", Arrays: 2,
		CUDA: "mul_rn(y, x)",
		Go:   func(y, x, _ float64) float64 { return y * x }},
	{Name: "sub", Arrays: 2,
		CUDA: "sub_rn(y, x)",
		Go:   func(y, x, _ float64) float64 { return y - x }},
	// Integers divide in float64 and store as ever: the quotient truncates
	// toward zero, as C's does, and n/0 saturates (0/0 is 0) instead of
	// trapping.
	{Name: "div", Arrays: 2,
		CUDA: "div_rn(y, x)",
		Go:   func(y, x, _ float64) float64 { return y / x }},
	// The operators with a number on one side: A + a and a + A, A / a,
	// a - A and a / A. A - a adds -a, the same in IEEE arithmetic; A * a
	// and a * A are scale, and -A is scale by -1.
	{Name: "add_scalar", Arrays: 1, Scalar: "a",
		CUDA: "add_rn(x, a)",
		Go:   func(_, x, a float64) float64 { return x + a }},
	{Name: "div_scalar", Arrays: 1, Scalar: "a",
		CUDA: "div_rn(x, a)",
		Go:   func(_, x, a float64) float64 { return x / a }},
	{Name: "rsub", Arrays: 1, Scalar: "a",
		CUDA: "sub_rn(a, x)",
		Go:   func(_, x, a float64) float64 { return a - x }},
	{Name: "rdiv", Arrays: 1, Scalar: "a",
		CUDA: "div_rn(a, x)",
		Go:   func(_, x, a float64) float64 { return a / x }},
	// A NaN in either wins, as in PyTorch and NumPy; of equal values, -0
	// and +0 included, the result is y, as NumPy's.
	{Name: "maximum", Arrays: 2,
		CUDA: "(y >= x || y != y) ? y : x",
		Go: func(y, x, _ float64) float64 {
			if y >= x || y != y {
				return y
			}
			return x
		}},
	{Name: "minimum", Arrays: 2,
		CUDA: "(y <= x || y != y) ? y : x",
		Go: func(y, x, _ float64) float64 {
			if y <= x || y != y {
				return y
			}
			return x
		}},
}

func init() {
	for _, op := range elementwiseOps {
		op.loops = generatedLoops[op.Name]
		op.goName = strings.ToUpper(op.Name[:1]) + op.Name[1:]
	}
}

// ElementwiseOps is the table of elementwise kernels, in the order they
// were added. The entries are shared: read them, never change them.
func ElementwiseOps() []*ElementwiseOp { return slices.Clone(elementwiseOps) }

// LookupElementwise is the elementwise kernel called name, or nil.
func LookupElementwise(name string) *ElementwiseOp {
	for _, op := range elementwiseOps {
		if op.Name == name {
			return op
		}
	}
	return nil
}

// computeType is what the elementwise loops compute in.
type computeType interface{ float32 | float64 }

// elementwiseLoops are one kernel's loops in each compute type: out[i] =
// f(ys[i], xs[i], a) for i < len(out); a one-array kernel's element is
// ys[i] and it ignores xs. out may be ys itself.
type elementwiseLoops struct {
	f32 func(out, ys, xs []float32, a float32)
	f64 func(out, ys, xs []float64, a float64)
}
