package kernels

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gluaproject/glua/device"
)

//go:generate go run ./internal/elementwisegen

// ElementwiseOp is a built-in in-place kernel whose every result element
// depends only on the elements in the same place of its one or two arrays
// and on a number. Its entry in elementwiseOps is the whole of it: the CUDA
// entry points, the Go loops the CPU backend runs, the runtime's
// Elementwise and the Lua function kernels.<Name> all follow from it.
//
// Every implementation computes as doc.go says: floats in the dtype's
// compute type C (float64 for float64, float32 for the others), with a
// rounded to C first and the result stored as device.Set stores it;
// integers in integer arithmetic that wraps modulo 2^bits, with a taken
// modulo 2^bits into the dtype.
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
	// div_rn (dtypes.cu), so that each rounds once, as in Go. Unless
	// IntCUDA is set, the same expression serves the integer dtypes, whose
	// C is int (int32, uint8) or i64 (int64): there mul_rn, add_rn and
	// sub_rn wrap modulo 2^bits and comparisons compare integers.
	CUDA string
	// Go is the same in float64 (a one-array kernel gets its element as x,
	// and y = 0). go generate writes loops that run its body with C in
	// place of float64, so it may use only operators, conversions and
	// functions generic in C: a conversion float64(·) is then a rounding
	// to C, and keeps Go from fusing a product into a sum. Unless IntGo is
	// set, the loops of the integer dtypes run the same body with C the
	// dtype's Go type (int32, int64, uint8), whose +, - and * wrap as the
	// CUDA side's do.
	Go func(y, x, a float64) float64
	// IntCUDA and IntGo, set together, are the kernel on the integer
	// dtypes where CUDA and Go, read in integers, would mean something
	// else (a quotient): the expression in C and the function written in
	// int64, whose loops run with C the dtype's Go type.
	IntCUDA string
	IntGo   func(y, x, a int64) int64
	// Selects is set where the result is y or x itself, bits and all
	// (maximum, minimum), so that a NaN result keeps its bits; every
	// other float result that is a NaN is the GPU's (nan.go), decided by
	// the operands in the order CUDA names them.
	Selects bool

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
	// Integers divide as NumPy's // (floor_divide) does: the quotient
	// rounds toward minus infinity, a division by zero gives 0 (NumPy's
	// value, where C would trap) and the smallest value divided by -1
	// wraps to itself.
	{Name: "div", Arrays: 2,
		CUDA:    "div_rn(y, x)",
		Go:      func(y, x, _ float64) float64 { return y / x },
		IntCUDA: "floor_div(y, x)",
		IntGo:   func(y, x, _ int64) int64 { return floorDiv(y, x) }},
	// The operators with a number on one side: A + a and a + A, A / a,
	// a - A and a / A. A - a adds -a, the same in IEEE arithmetic and
	// modulo 2^bits; A * a and a * A are scale, and -A is scale by -1.
	{Name: "add_scalar", Arrays: 1, Scalar: "a",
		CUDA: "add_rn(x, a)",
		Go:   func(_, x, a float64) float64 { return x + a }},
	{Name: "div_scalar", Arrays: 1, Scalar: "a",
		CUDA:    "div_rn(x, a)",
		Go:      func(_, x, a float64) float64 { return x / a },
		IntCUDA: "floor_div(x, a)",
		IntGo:   func(_, x, a int64) int64 { return floorDiv(x, a) }},
	{Name: "rsub", Arrays: 1, Scalar: "a",
		CUDA: "sub_rn(a, x)",
		Go:   func(_, x, a float64) float64 { return a - x }},
	{Name: "rdiv", Arrays: 1, Scalar: "a",
		CUDA:    "div_rn(a, x)",
		Go:      func(_, x, a float64) float64 { return a / x },
		IntCUDA: "floor_div(a, x)",
		IntGo:   func(_, x, a int64) int64 { return floorDiv(a, x) }},
	// A NaN in either wins, as in PyTorch and NumPy; of equal values, -0
	// and +0 included, the result is y, as NumPy documents maximum
	// (np.where(y >= x, y, x)); its vector loops on x86 give x for two
	// zeros instead, so NumPy's own answer for them depends on the
	// machine. Integers never hold a NaN, so for them this is the larger
	// (smaller) of two integers.
	{Name: "maximum", Arrays: 2, Selects: true,
		CUDA: "(y >= x || y != y) ? y : x",
		Go: func(y, x, _ float64) float64 {
			if y >= x || y != y {
				return y
			}
			return x
		}},
	{Name: "minimum", Arrays: 2, Selects: true,
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

// floatCompute and intCompute are what the elementwise loops compute in:
// float32 for the 2-byte floats too, and each integer dtype in its own Go
// type, whose arithmetic wraps as the CUDA side's does.
type (
	floatCompute interface{ float32 | float64 }
	intCompute   interface{ int32 | int64 | uint8 }
	computeType  interface{ floatCompute | intCompute }
)

// elementwiseLoops are one kernel's loops in each compute type: out[i] =
// f(ys[i], xs[i], a) for i < len(out); a one-array kernel's element is
// ys[i] and it ignores xs. out may be ys itself.
type elementwiseLoops struct {
	f32 func(out, ys, xs []float32, a float32)
	f64 func(out, ys, xs []float64, a float64)
	i32 func(out, ys, xs []int32, a int32)
	i64 func(out, ys, xs []int64, a int64)
	u8  func(out, ys, xs []uint8, a uint8)
}

// floorDiv is NumPy's y // x on integers: the quotient rounded toward
// minus infinity, 0 for a division by zero, and the smallest value over
// -1 wrapping to itself (which Go's / already does).
func floorDiv[C intCompute](y, x C) C {
	if x == 0 {
		return 0
	}
	q := y / x
	if q*x != y && (y < 0) != (x < 0) {
		q--
	}
	return q
}

// IntegerScalar reports whether a is a number the elementwise kernels of
// the integer dtypes take, an integer of magnitude below 2^63, and returns
// it as an int64, which a kernel takes modulo 2^bits into its dtype. A
// fraction, an infinity, a NaN or a larger number is none.
func IntegerScalar(a float64) (v int64, ok bool) {
	if a != math.Trunc(a) || math.Abs(a) >= 0x1p63 {
		return 0, false
	}
	return int64(a), true
}

// intScalar is a for op on the integer dtype dt, or an error naming the
// kernel, the number and the dtype. A kernel that takes no number ignores
// a.
func (op *ElementwiseOp) intScalar(dt device.DType, a float64) (int64, error) {
	if op.Scalar == "" {
		return 0, nil
	}
	v, ok := IntegerScalar(a)
	if !ok {
		return 0, fmt.Errorf("kernels.%s: %s %v is not an integer of magnitude below 2^63, which %s needs", op.goName, op.Scalar, a, dt)
	}
	return v, nil
}
