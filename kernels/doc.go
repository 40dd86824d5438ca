// Package kernels holds glua's built-in kernels: the CUDA C sources the GPU
// runs and a Go implementation of each, which the CPU backend runs and which
// the GPU kernels are tested against.
//
// The Go implementations work on raw little-endian bytes and a dtype, as the
// device stores them: an array or view is contiguous and its element count is
// len(bytes)/dtype.Size(). Callers (the runtime) check shapes and dtypes
// first; a length that is not a whole number of elements, operands of
// different lengths, or an invalid dtype is a bug in the caller, and the
// functions panic on it as gonum's BLAS does, naming the function and the
// problem.
//
// # Arithmetic
//
// Every implementation of a kernel, in Go or CUDA, computes exactly as
// follows, so that the CPU and GPU backends agree bit for bit on elementwise
// results:
//
//   - float64 computes in float64.
//   - float32 computes in float32. Scalar arguments (Fill's v, the a of
//     Scale, Axpy and every elementwise kernel) are rounded to float32
//     first: Axpy is y = float32(a)·x + y.
//   - float16 and bfloat16 load each element to float32 (exactly), compute in
//     float32 as above, and round the result to nearest even on store.
//   - int32, int64 and uint8 compute in integer arithmetic, as NumPy and
//     PyTorch do: sums, differences and products (Add, Sub, Mul, Axpy,
//     Scale, AddScalar, Rsub, and so negation) wrap around modulo 2^bits,
//     so that int64 (2^53 + 2) + 1 - (2^53 + 2) is 1 and -uint8(1) is 255;
//     Maximum and Minimum compare integers. The number a must be an
//     integer of magnitude below 2^63 (IntegerScalar; the runtime refuses
//     any other, and these functions panic on one) and is taken modulo
//     2^bits into the dtype, as PyTorch takes it: a uint8 array plus -1 is
//     the array plus 255. Go computes in the dtype's own Go type, whose
//     arithmetic wraps; CUDA C, where signed overflow is undefined,
//     computes through the unsigned type of the same width, int32 and
//     uint8 in 32 bits and int64 in 64.
//   - Div, DivScalar and Rdiv on integers are NumPy's floor division (//,
//     PyTorch's floor_divide): the quotient rounds toward minus infinity,
//     so -7 div 2 is -4; a division by zero gives 0, NumPy's value for
//     integer // by zero, where C would trap; the smallest value divided
//     by -1 wraps to itself, where C would trap too.
//   - A product and a sum are rounded separately, never fused: Axpy is
//     round(round(a·x) + y). In Go an explicit conversion prevents fusion;
//     in CUDA use mul_rn/add_rn (dtypes.cu's inline PTX), which the
//     compiler never contracts.
//   - A result that is a NaN has the GPU's bits, whatever Go's arithmetic
//     made (nan.go): float32's one NaN, or float64's operand NaN. Maximum
//     and Minimum select an operand and keep its bits.
//   - Fill stores v converted as device.Set converts it: a float64 reaches a
//     2-byte float through float32, as in __float2half_rn((float)v), and an
//     integer dtype by truncating toward zero and saturating at the type's
//     range, NaN becoming 0 (what PTX's cvt.rzi.sat does).
//   - Copy between dtypes loads the source element exactly (as float64; an
//     int64 beyond 2^53 in magnitude rounds to the nearest float64) and
//     stores it by the same conversion; between equal dtypes it copies the
//     bits, NaN payloads included.
//
// Reductions (Sum, Norm, MaxAbsDiff) return a float64. On the float dtypes
// they accumulate in float64, in an order that depends on the element
// count only (reduce.cu's comment tells it), which the Go implementations
// follow too: Sum and Norm agree across backends and devices bit for bit.
// On the integer dtypes Sum accumulates in int64, wrapping modulo 2^64 as
// NumPy's sum does, and rounds the total to float64 once, and MaxAbsDiff
// takes each |x - y| exactly (in uint64) and rounds the largest once: both
// are exact, so the backends agree bit for bit; Norm accumulates in
// float64. MaxAbsDiff is exact for floats too: it is NaN if either operand
// holds a NaN anywhere, and equal values (infinities included) differ by
// 0. An empty array sums to 0, has norm 0 and differs from another empty
// array by 0.
//
// Rand and RandN are counter-based: element i depends on the seed and its
// counter alone, so the GPU gives the same bits; rand.go and randn.go give
// the formulas.
//
// # Elementwise kernels
//
// Scale, Axpy, Add, Mul and the rest of the in-place kernels that compute
// an element from the elements in its place are entries of one table,
// elementwiseOps in elementwise_ops.go: a name, how many arrays, the
// number's name, the CUDA expression and the Go function, and the integer
// dtypes' own pair where they compute another thing (a floor quotient).
// The CUDA entry points, the CPU loops (written by go generate into
// elementwise_loops.go), the runtime's Elementwise and the Lua functions
// all come from it, so a new kernel is one entry there and a go generate.
// Each kernel also writes into a separate output (ApplyTo,
// GPU.ElementwiseTo), which is how the runtime's operators make a new
// array in one pass. Fill is not one of them: it stores bits it computes once on the host,
// with a kernel of its own that reads nothing.
//
// The rules above decide the edge cases, the same on both backends:
// Maximum and Minimum return a NaN when either element is one (as
// PyTorch's and NumPy's do) and y when the elements are equal, -0 and +0
// included (as NumPy's); Div divides floats correctly rounded and integers
// by floor division, 0 where the divisor is 0.
package kernels
