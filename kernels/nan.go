package kernels

import "math"

// The bits of a NaN that arithmetic gives are the GPU's on both backends,
// so that a NaN reads, prints and saves the same whichever ran it. The
// GPU gives (measured on an H200 for the PTX operations glua emits and
// CUDA's math functions):
//
//   - float32, and so the 2-byte floats, which compute in it: every
//     operation whose result is a NaN, negation and absolute value
//     included, gives 0x7fffffff, whatever its operands held.
//   - float64: an operation gives a NaN operand's bits, quieted, and
//     keeps its sign even through negation and absolute value; of two NaN
//     operands either's (below). A NaN made from numbers (0/0, ∞−∞, 0·∞,
//     √−1, log −1, sin ∞) is 0xfff8000000000000.
//
// Go on amd64 agrees with the float64 rule for one NaN operand and for a
// made NaN, but keeps a float32 NaN's payload and sign, takes the first of
// two NaN operands, and flips or clears a sign in negation and math.Abs;
// the math package returns its own NaN (0x7ff8000000000001). The CPU
// backend therefore mends the NaN results of its arithmetic with
// ArithNaN32 and ArithNaN64. Selections (maximum, minimum, Lua's math.max
// and math.min), copies and conversions keep a NaN's bits on both.
//
// One case is left open: where two NaN operands of a float64 operation
// meet, the GPU's choice depends on how its compiler ordered them (a
// lone add.rn.f64 took the second, its float64 division and reductions
// the first), so either NaN is right, as IEEE 754 allows; the CPU backend
// takes the second. The kernel
// language's negation and absolute value are a product by -1 and a sum
// with 0 on the GPU (jit's prelude.cu), which the compiler cannot fold
// into a conversion between float32 and float64, where a NaN's sign would
// otherwise depend on how the program compiled.

// ArithNaN32 is every NaN result of float32 arithmetic on the GPU.
var ArithNaN32 = math.Float32frombits(0x7fffffff)

// madeNaN64 is the NaN that float64 arithmetic makes from numbers.
const madeNaN64 = 0xfff8000000000000

// ArithNaN64 is the NaN result of a float64 operation on a and b, in the
// order the CUDA expression names them (a unary one passes its operand
// twice): b's bits, quieted, if b is a NaN; else a's; else the NaN made
// from numbers. Of more operands, fold: ArithNaN64(ArithNaN64(a, b), c).
func ArithNaN64(a, b float64) float64 {
	for _, v := range [2]float64{b, a} {
		if v != v {
			return math.Float64frombits(math.Float64bits(v) | 0x8000000000000)
		}
	}
	return math.Float64frombits(madeNaN64)
}

// arithNaN is the NaN result of an operation of compute type C on
// operands, in the order CUDA names them; the loops call it only when
// their result is a NaN, so never for the integer types.
func arithNaN[C computeType](operands ...C) C {
	var r C
	switch p := any(&r).(type) {
	case *float32:
		*p = ArithNaN32
	case *float64:
		nan := float64(operands[0])
		if len(operands) == 1 {
			nan = ArithNaN64(nan, nan)
		}
		for _, o := range operands[1:] {
			nan = ArithNaN64(nan, float64(o))
		}
		*p = nan
	}
	return r
}

// reducedNaN is what a reduction that met a NaN returns: one NaN, on both
// backends, whatever bits the accumulation carried.
func reducedNaN(v float64) float64 {
	if v != v {
		return math.NaN()
	}
	return v
}
