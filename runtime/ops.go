package runtime

import (
	"errors"
	"fmt"
	"math"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/kernels"
)

// The in-place kernels. Each checks every argument before anything runs, so
// a mistake is an error naming the arrays and their shapes, never a wrong
// answer, and no array is touched.

// Fill sets every element of x to v, which must be a value of x's dtype
// (device.CheckValue).
func (rt *Runtime) Fill(x *Array, v float64) error {
	if err := x.live(rt, "x"); err != nil {
		return err
	}
	if err := device.CheckValue(x.dtype, v); err != nil {
		return err
	}
	if x.size == 0 {
		return nil
	}
	return rt.exec.fill(x.span(), v)
}

// Scale multiplies x by a in place.
func (rt *Runtime) Scale(x *Array, a float64) error { return rt.Elementwise(scaleOp, x, a, nil) }

// Copy copies src into dst, converting between dtypes. Shapes must match.
// src may overlap dst: dst gets what src held before the call (overlap.go).
func (rt *Runtime) Copy(dst, src *Array) error {
	if err := rt.liveAll(dst, "dst", src, "src"); err != nil {
		return err
	}
	if !equalShape(dst.shape, src.shape) {
		return fmt.Errorf("dst is %s but src is %s", shapeString(dst.shape), shapeString(src.shape))
	}
	if dst.size == 0 {
		return nil
	}
	if dst.dtype == src.dtype {
		return rt.copyArray(dst, "dst", src, "src")
	}
	// Arrays of two dtypes never share memory: a buffer's views all have
	// its dtype.
	return rt.exec.copy(dst.span(), src.span())
}

// Axpy computes y = a·x + y.
func (rt *Runtime) Axpy(y *Array, a float64, x *Array) error { return rt.Elementwise(axpyOp, y, a, x) }

// Add computes y = y + x elementwise.
func (rt *Runtime) Add(y, x *Array) error { return rt.Elementwise(addOp, y, 0, x) }

// Mul computes y = y · x elementwise.
func (rt *Runtime) Mul(y, x *Array) error { return rt.Elementwise(mulOp, y, 0, x) }

// The kernels the methods above name; every kernel of the table is
// reached through Elementwise.
var (
	scaleOp = kernels.LookupElementwise("scale")
	axpyOp  = kernels.LookupElementwise("axpy")
	addOp   = kernels.LookupElementwise("add")
	mulOp   = kernels.LookupElementwise("mul")
)

// Elementwise runs one of the elementwise kernels of kernels.ElementwiseOps
// in place: y = f(y, x, a) element by element, for a kernel that takes two
// arrays of one shape and dtype; x = f(x, a), with x passed as y and nil
// in x's place, for one that takes one. a is ignored by a kernel that
// takes no number. On an integer array a must be an integer of magnitude
// below 2^63, which the kernel takes modulo 2^bits; a fraction, an
// infinity or a NaN is an error, as PyTorch refuses a float alpha for an
// integral tensor. Messages call the arrays y and x, or x alone. x may be
// y itself, or a view that partly overlaps it: every element of x is read
// before y is written (overlap.go).
func (rt *Runtime) Elementwise(op *kernels.ElementwiseOp, y *Array, a float64, x *Array) error {
	if op == nil {
		return errors.New("no elementwise kernel given")
	}
	if op.Arrays == 1 {
		if x != nil {
			return fmt.Errorf("%s takes one array, not two", op.Name)
		}
		if err := y.live(rt, "x"); err != nil {
			return err
		}
		if err := integerNumber(op, "x", y.dtype, a); err != nil || y.size == 0 {
			return err
		}
		return rt.exec.elementwise(op, y.span(), y.span(), a, span{})
	}
	if err := rt.elementwise(y, "y", x, "x"); err != nil {
		return err
	}
	if err := integerNumber(op, "y", y.dtype, a); err != nil || y.size == 0 {
		return err
	}
	if partlyOverlaps(y, x) {
		return rt.throughTemporary(y, "y", x, "x", func(tmp *Array) error {
			return rt.exec.elementwise(op, tmp.span(), y.span(), a, x.span())
		})
	}
	return rt.exec.elementwise(op, y.span(), y.span(), a, x.span())
}

// integerNumber checks op's number a for an array of dtype dt called
// name: on an integer dtype it must be an integer of magnitude below 2^63.
func integerNumber(op *kernels.ElementwiseOp, name string, dt device.DType, a float64) error {
	if op.Scalar == "" || dt.IsFloat() {
		return nil
	}
	if _, ok := kernels.IntegerScalar(a); !ok {
		return fmt.Errorf("%s is %s, so %s must be an integer of magnitude below 2^63, not %s", name, dt, op.Scalar, lua51.NumberString(a))
	}
	return nil
}

// Sum is the sum of x's elements: accumulated in float64 for a float
// dtype; for an integer one exactly, in int64 wrapping as NumPy's sum
// does, and rounded to float64 once.
func (rt *Runtime) Sum(x *Array) (float64, error) {
	if err := x.live(rt, "x"); err != nil {
		return 0, err
	}
	if x.size == 0 {
		return 0, nil
	}
	if err := rt.uncapturable("a reduction to a number"); err != nil {
		return 0, err
	}
	return rt.exec.sum(x.span())
}

// Norm is the Euclidean norm of x's elements.
func (rt *Runtime) Norm(x *Array) (float64, error) {
	if err := x.live(rt, "x"); err != nil {
		return 0, err
	}
	if x.size == 0 {
		return 0, nil
	}
	if err := rt.uncapturable("a reduction to a number"); err != nil {
		return 0, err
	}
	return rt.exec.norm(x.span())
}

// MaxAbsDiff is max |x − y| over all elements; NaN if either holds a NaN.
// Integers differ exactly, and the largest difference is rounded to
// float64 once.
func (rt *Runtime) MaxAbsDiff(x, y *Array) (float64, error) {
	if err := rt.elementwise(x, "x", y, "y"); err != nil {
		return 0, err
	}
	if x.size == 0 {
		return 0, nil
	}
	if err := rt.uncapturable("a reduction to a number"); err != nil {
		return 0, err
	}
	return rt.exec.maxAbsDiff(x.span(), y.span())
}

// elementwise checks two arrays for a kernel that pairs their elements.
func (rt *Runtime) elementwise(y *Array, yname string, x *Array, xname string) error {
	if err := rt.liveAll(y, yname, x, xname); err != nil {
		return err
	}
	if !equalShape(y.shape, x.shape) {
		return fmt.Errorf("%s is %s but %s is %s; shapes must match", yname, shapeString(y.shape), xname, shapeString(x.shape))
	}
	if y.dtype != x.dtype {
		return fmt.Errorf("%s is %s but %s is %s; dtypes must match", yname, y.dtype, xname, x.dtype)
	}
	return nil
}

func (rt *Runtime) liveAll(a *Array, aname string, b *Array, bname string) error {
	if err := a.live(rt, aname); err != nil {
		return err
	}
	return b.live(rt, bname)
}

// MatmulOptions are the optional arguments of Matmul. The zero value is
// C = A·B.
type MatmulOptions struct {
	Alpha, Beta    float64
	AlphaSet       bool // Alpha was given; otherwise it is 1
	TransA, TransB bool
	// Precision is "default" (or "") or "tf32": float32 products on tensor
	// cores with tf32 inputs.
	Precision string
}

// Matmul computes C = alpha·op(A)·op(B) + beta·C in place. A 1-D B is a
// column vector and a 1-D A a row vector, with a 1-D C: y = op(A)·x or
// y = x·op(B), the matrix-vector product (gemv) as a gemm with one column
// or one row, which cuBLAS and BLAS run as such. A 3-D C is a batch,
// C[i] = alpha·op(A[i])·op(B[i]) + beta·C[i], with A and B 3-D (one
// matrix per product) or 2-D (one matrix for all), in one call of the
// backend (cuBLAS's strided-batched GEMM on the GPU).
func (rt *Runtime) Matmul(C, A, B *Array, o MatmulOptions) error {
	for _, p := range []struct {
		a    *Array
		name string
	}{{C, "C"}, {A, "A"}, {B, "B"}} {
		if err := p.a.live(rt, p.name); err != nil {
			return err
		}
		if n := p.a.NDim(); n < 1 || n > 3 {
			return fmt.Errorf("%s is %s; matmul needs 2-D arrays, a 1-D vector beside one, or 3-D batches of matrices", p.name, shapeString(p.a.shape))
		}
	}
	dt := C.dtype
	if !dt.IsFloat() {
		return fmt.Errorf("C is %s; matmul supports float32, float64, float16 and bfloat16", dt)
	}
	if A.dtype != dt || B.dtype != dt {
		return fmt.Errorf("A is %s, B is %s and C is %s; dtypes must match", A.dtype, B.dtype, dt)
	}
	tf32, err := matmulPrecision(o.Precision, dt)
	if err != nil {
		return err
	}
	g, err := gemmShape(C, A, B, o)
	if err != nil {
		return err
	}
	if overlaps(C, A) || overlaps(C, B) {
		return fmt.Errorf("C shares memory with an input; write the product into a separate array")
	}
	alpha := 1.0
	if o.AlphaSet {
		alpha = o.Alpha
	}
	if math.IsNaN(alpha) || math.IsNaN(o.Beta) {
		return fmt.Errorf("alpha and beta must be numbers, got %s and %s", lua51.NumberString(alpha), lua51.NumberString(o.Beta))
	}
	if g.M == 0 || g.N == 0 || C.size == 0 {
		return nil
	}
	if g.K == 0 { // an empty sum: BLAS's rule, C = beta·C, with beta = 0 overwriting
		if o.Beta == 0 {
			return rt.Fill(C, 0)
		}
		return rt.Scale(C, o.Beta)
	}
	g.DType, g.Alpha, g.Beta, g.TF32, g.Stream = dt, alpha, o.Beta, tf32, rt.streams.own
	g.A, g.B, g.C = A.ptr(), B.ptr(), C.ptr()
	return rt.backend.Gemm(g)
}

// matmulPrecision says whether precision asks for tf32 on dt.
func matmulPrecision(precision string, dt device.DType) (bool, error) {
	switch precision {
	case "", "default":
		return false, nil
	case "tf32":
		if dt != device.Float32 {
			return false, fmt.Errorf("precision \"tf32\" applies to float32, not %s", dt)
		}
		return true, nil
	}
	return false, fmt.Errorf("unknown precision %q (expected \"default\" or \"tf32\")", precision)
}

// gemmShape is the product's sizes, transposes and row strides, once the
// shapes are checked: a 1-D B is a k×1 matrix (each row one element), a
// 1-D A a 1×k one, and C is then 1-D too; a 3-D operand is a batch.
func gemmShape(C, A, B *Array, o MatmulOptions) (device.Gemm, error) {
	if A.NDim() == 3 || B.NDim() == 3 || C.NDim() == 3 {
		return batchedShape(C, A, B, o)
	}
	if A.NDim() == 1 || B.NDim() == 1 {
		return gemvShape(C, A, B, o)
	}
	if C.NDim() != 2 {
		return device.Gemm{}, fmt.Errorf("C is %s, A is %s and B is %s; C must be 2-D when A and B are",
			shapeString(C.shape), shapeString(A.shape), shapeString(B.shape))
	}
	return matrixGemm(C.shape, "C", A.shape, "A", B.shape, "B", o)
}

// matrixGemm is gemmShape for the matrices c = op(a)·op(b), of 2-D
// shapes, each named as its messages name it.
func matrixGemm(c []int, cname string, a []int, aname string, b []int, bname string, o MatmulOptions) (device.Gemm, error) {
	m, k := a[0], a[1]
	if o.TransA {
		m, k = k, m
	}
	kb, n := b[0], b[1]
	if o.TransB {
		kb, n = n, kb
	}
	if k != kb {
		return device.Gemm{}, fmt.Errorf("%s is %s but %s is %s; inner dimensions %d and %d differ",
			opName(aname, o.TransA), shapeString([]int{m, k}), opName(bname, o.TransB), shapeString([]int{kb, n}), k, kb)
	}
	if c[0] != m || c[1] != n {
		return device.Gemm{}, fmt.Errorf("%s is %s but %s·%s is %dx%d", cname, shapeString(c), opName(aname, o.TransA), opName(bname, o.TransB), m, n)
	}
	return device.Gemm{TransA: o.TransA, TransB: o.TransB, M: m, N: n, K: k,
		LDA: a[1], LDB: b[1], LDC: c[1]}, nil
}

// threeShapes names the shapes of a product's arrays, for its error
// messages; it is called only on the way to an error, so that a launch
// formats nothing.
func threeShapes(C, A, B *Array) string {
	return fmt.Sprintf("C is %s, A is %s and B is %s", shapeString(C.shape), shapeString(A.shape), shapeString(B.shape))
}

// batchedShape is gemmShape for a batch of products, C[i] = op(A[i])·op(B[i])
// with C of batch×m×n: an operand is 3-D, one matrix per product, or 2-D
// (or 3-D of one matrix), one matrix every product shares (NumPy's and
// torch.matmul's broadcast). The matrices of a 3-D array follow each
// other, so each operand's stride is its matrix's size, or 0 when shared.
func batchedShape(C, A, B *Array, o MatmulOptions) (device.Gemm, error) {
	switch {
	case A.NDim() == 1 || B.NDim() == 1:
		return device.Gemm{}, fmt.Errorf("%s; a batch of products needs matrices on both sides, 2-D or 3-D", threeShapes(C, A, B))
	case C.NDim() != 3:
		return device.Gemm{}, fmt.Errorf("%s; C must be 3-D (batch x rows x columns) when A or B is", threeShapes(C, A, B))
	case A.NDim() == 2 && B.NDim() == 2:
		return device.Gemm{}, fmt.Errorf("%s; a 3-D C needs A or B 3-D, one matrix per product", threeShapes(C, A, B))
	}
	batch := C.shape[0]
	matrix := func(x *Array, name string) ([]int, string, int, error) {
		if x.NDim() == 2 {
			return x.shape, name, 0, nil // shared by every product
		}
		if x.shape[0] == 1 && batch != 1 {
			return x.shape[1:], name + "[1]", 0, nil
		}
		if x.shape[0] != batch {
			return nil, "", 0, fmt.Errorf("%s; %s holds %d matrices but C holds %d: batch sizes must match (or %s hold one matrix, for every product)",
				threeShapes(C, A, B), name, x.shape[0], batch, name)
		}
		return x.shape[1:], name + "[i]", x.shape[1] * x.shape[2], nil
	}
	a, aname, strideA, err := matrix(A, "A")
	if err != nil {
		return device.Gemm{}, err
	}
	b, bname, strideB, err := matrix(B, "B")
	if err != nil {
		return device.Gemm{}, err
	}
	g, err := matrixGemm(C.shape[1:], "C[i]", a, aname, b, bname, o)
	if err != nil {
		return device.Gemm{}, err
	}
	g.Batch, g.StrideA, g.StrideB, g.StrideC = batch, strideA, strideB, C.shape[1]*C.shape[2]
	return g, nil
}

// gemvShape is gemmShape with a vector on one side. Its messages name all
// three shapes, since which one is wrong is less plain than for matrices.
func gemvShape(C, A, B *Array, o MatmulOptions) (device.Gemm, error) {
	switch {
	case A.NDim() == 1 && B.NDim() == 1:
		return device.Gemm{}, fmt.Errorf("%s; matmul needs a matrix on one side (the dot product of two vectors is kernels.sum(A * B))", threeShapes(C, A, B))
	case C.NDim() != 1:
		return device.Gemm{}, fmt.Errorf("%s; C must be 1-D when A or B is", threeShapes(C, A, B))
	case A.NDim() == 1 && o.TransA, B.NDim() == 1 && o.TransB:
		return device.Gemm{}, fmt.Errorf("%s; trans_a and trans_b apply to a matrix, not to the vector", threeShapes(C, A, B))
	}
	if B.NDim() == 1 { // y = op(A)·x
		m, k := A.shape[0], A.shape[1]
		if o.TransA {
			m, k = k, m
		}
		if k != B.shape[0] || C.shape[0] != m {
			return device.Gemm{}, fmt.Errorf("%s; %s·B needs B of %d and gives C of %d", threeShapes(C, A, B), opName("A", o.TransA), k, m)
		}
		return device.Gemm{TransA: o.TransA, M: m, N: 1, K: k, LDA: A.shape[1], LDB: 1, LDC: 1}, nil
	}
	k, n := B.shape[0], B.shape[1] // y = x·op(B)
	if o.TransB {
		k, n = n, k
	}
	if k != A.shape[0] || C.shape[0] != n {
		return device.Gemm{}, fmt.Errorf("%s; A·%s needs A of %d and gives C of %d", threeShapes(C, A, B), opName("B", o.TransB), k, n)
	}
	return device.Gemm{TransB: o.TransB, M: 1, N: n, K: k, LDA: max(k, 1), LDB: B.shape[1], LDC: max(n, 1)}, nil
}

func opName(name string, trans bool) string {
	if trans {
		return name + "ᵀ"
	}
	return name
}

// overlaps reports whether two arrays share any byte of memory.
func overlaps(a, b *Array) bool {
	if a.buf != b.buf {
		return false
	}
	aEnd, bEnd := a.offset+a.NBytes(), b.offset+b.NBytes()
	return a.offset < bEnd && b.offset < aEnd
}
