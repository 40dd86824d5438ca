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

// Fill sets every element of x to v.
func (rt *Runtime) Fill(x *Array, v float64) error {
	if err := x.live(rt, "x"); err != nil {
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
		return rt.copyDevice(dst, src)
	}
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
// takes no number. Messages call the arrays y and x, or x alone.
func (rt *Runtime) Elementwise(op *kernels.ElementwiseOp, y *Array, a float64, x *Array) error {
	if op == nil {
		return errors.New("no elementwise kernel given")
	}
	if op.Arrays == 1 {
		if x != nil {
			return fmt.Errorf("%s takes one array, not two", op.Name)
		}
		if err := y.live(rt, "x"); err != nil || y.size == 0 {
			return err
		}
		return rt.exec.elementwise(op, y.span(), a, span{})
	}
	if err := rt.elementwise(y, "y", x, "x"); err != nil || y.size == 0 {
		return err
	}
	return rt.exec.elementwise(op, y.span(), a, x.span())
}

// Sum is the sum of x's elements, accumulated in float64.
func (rt *Runtime) Sum(x *Array) (float64, error) {
	if err := x.live(rt, "x"); err != nil {
		return 0, err
	}
	if x.size == 0 {
		return 0, nil
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
	return rt.exec.norm(x.span())
}

// MaxAbsDiff is max |x − y| over all elements; NaN if either holds a NaN.
func (rt *Runtime) MaxAbsDiff(x, y *Array) (float64, error) {
	if err := rt.elementwise(x, "x", y, "y"); err != nil {
		return 0, err
	}
	if x.size == 0 {
		return 0, nil
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

// Matmul computes C = alpha·op(A)·op(B) + beta·C in place.
func (rt *Runtime) Matmul(C, A, B *Array, o MatmulOptions) error {
	for _, p := range []struct {
		a    *Array
		name string
	}{{C, "C"}, {A, "A"}, {B, "B"}} {
		if err := p.a.live(rt, p.name); err != nil {
			return err
		}
		if p.a.NDim() != 2 {
			return fmt.Errorf("%s is %s; matmul needs 2-D arrays", p.name, shapeString(p.a.shape))
		}
	}
	dt := C.dtype
	if !dt.IsFloat() {
		return fmt.Errorf("C is %s; matmul supports float32, float64, float16 and bfloat16", dt)
	}
	if A.dtype != dt || B.dtype != dt {
		return fmt.Errorf("A is %s, B is %s and C is %s; dtypes must match", A.dtype, B.dtype, dt)
	}
	tf32 := false
	switch o.Precision {
	case "", "default":
	case "tf32":
		if dt != device.Float32 {
			return fmt.Errorf("precision \"tf32\" applies to float32, not %s", dt)
		}
		tf32 = true
	default:
		return fmt.Errorf("unknown precision %q (expected \"default\" or \"tf32\")", o.Precision)
	}
	m, k := A.shape[0], A.shape[1]
	if o.TransA {
		m, k = k, m
	}
	kb, n := B.shape[0], B.shape[1]
	if o.TransB {
		kb, n = n, kb
	}
	if k != kb {
		return fmt.Errorf("%s is %s but %s is %s; inner dimensions %d and %d differ",
			opName("A", o.TransA), shapeString([]int{m, k}), opName("B", o.TransB), shapeString([]int{kb, n}), k, kb)
	}
	if C.shape[0] != m || C.shape[1] != n {
		return fmt.Errorf("C is %s but %s·%s is %dx%d", shapeString(C.shape), opName("A", o.TransA), opName("B", o.TransB), m, n)
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
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 { // an empty sum: BLAS's rule, C = beta·C, with beta = 0 overwriting
		if o.Beta == 0 {
			return rt.Fill(C, 0)
		}
		return rt.Scale(C, o.Beta)
	}
	return rt.backend.Gemm(device.Gemm{
		DType: dt, TransA: o.TransA, TransB: o.TransB,
		M: m, N: n, K: k, Alpha: alpha, Beta: o.Beta,
		A: A.ptr(), B: B.ptr(), C: C.ptr(),
		LDA: A.shape[1], LDB: B.shape[1], LDC: C.shape[1],
		TF32: tf32, Stream: rt.stream,
	})
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
