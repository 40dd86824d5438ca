package runtime

import (
	"fmt"
	goruntime "runtime"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// Operator is an arithmetic operator on arrays, as Lua spells it.
type Operator byte

// The operators Arith and HostArith compute.
const (
	OpAdd Operator = '+'
	OpSub Operator = '-'
	OpMul Operator = '*'
	OpDiv Operator = '/'
)

func (op Operator) String() string { return string(rune(op)) }

// Operand is one side of an operator: Array, or the number Number when
// Array is nil.
type Operand struct {
	Array  *Array
	Number float64
}

// HostOperand is an Operand of the host: Array, or Number when Array is
// nil.
type HostOperand struct {
	Array  *HostArray
	Number float64
}

// The kernels of the operators, by the sides that are arrays: each writes
// a new array in one pass over its operands, so that C = A + B costs what
// kernels.add costs plus an allocation the pool's cache serves.
var (
	subOp       = kernels.LookupElementwise("sub")
	divOp       = kernels.LookupElementwise("div")
	addScalarOp = kernels.LookupElementwise("add_scalar")
	divScalarOp = kernels.LookupElementwise("div_scalar")
	rsubOp      = kernels.LookupElementwise("rsub")
	rdivOp      = kernels.LookupElementwise("rdiv")

	arithKernels = map[Operator]struct{ arrays, arrayNumber, numberArray *kernels.ElementwiseOp }{
		OpAdd: {addOp, addScalarOp, addScalarOp},
		OpSub: {subOp, addScalarOp, rsubOp}, // A - a adds -a: the same in IEEE arithmetic
		OpMul: {mulOp, scaleOp, scaleOp},
		OpDiv: {divOp, divScalarOp, rdivOp},
	}
)

// arrange is what computes x op y, for arrays x and y of either kind, nil
// where the side is the number xn or yn: the kernel, its number, its
// first array (x, or y when x is a number) and its second (nil for a
// number).
func arrange[A any](op Operator, x, y *A, xn, yn float64) (k *kernels.ElementwiseOp, a float64, first, second *A, err error) {
	ks, ok := arithKernels[op]
	switch {
	case !ok:
		err = fmt.Errorf("unknown operator %q", rune(op))
	case x != nil && y != nil:
		k, first, second = ks.arrays, x, y
	case x != nil && op == OpSub:
		k, a, first = ks.arrayNumber, -yn, x
	case x != nil:
		k, a, first = ks.arrayNumber, yn, x
	case y != nil:
		k, a, first = ks.numberArray, xn, y
	default:
		err = fmt.Errorf("%v of two numbers: an operator needs an array", op)
	}
	return k, a, first, second, err
}

// Arith returns a new array holding x op y elementwise, as NumPy's
// operators do (* multiplies elementwise). A number on either side takes
// the array's dtype and computes as the in-place kernels' numbers do; two
// arrays must have one shape and one dtype, since arrays are not
// broadcast. The result's dtype is NumPy's too: an integer array stays
// one, wrapping on overflow, except that / is true division and a number
// that is not an integer of magnitude below 2^63 (A * 1.5, A + 0.5) is a
// float, both of which make a float64 array computed on the operands
// converted to float64. The new array comes from the pool, like every
// other; a loop that must not allocate uses the in-place kernels instead.
func (rt *Runtime) Arith(op Operator, x, y Operand) (*Array, error) {
	k, a, first, second, err := arrange(op, x.Array, y.Array, x.Number, y.Number)
	if err != nil {
		return nil, err
	}
	if err := first.live(rt, operandName(x.Array != nil)); err != nil {
		return nil, err
	}
	if second != nil {
		if err := second.live(rt, "right operand"); err != nil {
			return nil, err
		}
		if err := sameOperands(first.shape, first.dtype, second.shape, second.dtype); err != nil {
			return nil, err
		}
	}
	if promotes(op, first.dtype, second == nil, a) {
		return rt.elementwiseFloat64(k, first, a, second)
	}
	return rt.elementwiseNew(k, first, a, second)
}

// promotes says whether op on an array of dt, with the number a when
// withNumber, gives a float64 array, as NumPy's / and its promotion of an
// integer array by a Python float do.
func promotes(op Operator, dt device.DType, withNumber bool, a float64) bool {
	if dt.IsFloat() {
		return false
	}
	if op == OpDiv {
		return true
	}
	_, integer := kernels.IntegerScalar(a)
	return withNumber && !integer
}

// Neg returns a new array holding -x: each element's sign flipped, zeros
// and NaNs included. Integer dtypes wrap, as NumPy's do: int32's smallest
// value stays itself, and a uint8 1 becomes 255.
func (rt *Runtime) Neg(x *Array) (*Array, error) {
	if err := x.live(rt, "operand"); err != nil {
		return nil, err
	}
	return rt.elementwiseNew(scaleOp, x, -1, nil)
}

func operandName(left bool) string {
	if left {
		return "left operand"
	}
	return "right operand"
}

// sameOperands checks two arrays an operator pairs.
func sameOperands(xshape []int, xdt device.DType, yshape []int, ydt device.DType) error {
	if !equalShape(xshape, yshape) {
		return fmt.Errorf("shapes %s and %s differ (numbers broadcast, arrays do not)", shapeString(xshape), shapeString(yshape))
	}
	if xdt != ydt {
		return fmt.Errorf("dtypes %s and %s differ (kernels.copy converts)", xdt, ydt)
	}
	return nil
}

// elementwiseNew runs k from y (and x) into a new array of y's shape and
// dtype; the operands are checked.
func (rt *Runtime) elementwiseNew(k *kernels.ElementwiseOp, y *Array, a float64, x *Array) (*Array, error) {
	out, err := rt.DeviceArray(y.shape, y.dtype)
	if err != nil || out.size == 0 {
		return out, err
	}
	var xs span
	if x != nil {
		xs = x.span()
	}
	if err := rt.exec.elementwise(k, out.span(), y.span(), a, xs); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// elementwiseFloat64 runs k, with y and x converted to float64, into a
// new float64 array: an integer operator's result where NumPy's is a
// float. x's conversion is a temporary from the pool, freed at once.
func (rt *Runtime) elementwiseFloat64(k *kernels.ElementwiseOp, y *Array, a float64, x *Array) (*Array, error) {
	out, err := rt.DeviceArray(y.shape, device.Float64)
	if err != nil || out.size == 0 {
		return out, err
	}
	var xs span
	if x != nil {
		tmp, err := rt.DeviceArray(x.shape, device.Float64)
		if err != nil {
			out.Free()
			return nil, err
		}
		defer tmp.Free()
		if err := rt.exec.copy(tmp.span(), x.span()); err != nil {
			out.Free()
			return nil, err
		}
		xs = tmp.span()
	}
	if err := rt.exec.copy(out.span(), y.span()); err != nil {
		out.Free()
		return nil, err
	}
	if err := rt.exec.elementwise(k, out.span(), out.span(), a, xs); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// HostArith is Arith on host arrays: a new HostArray, computed by the CPU
// backend's kernels, so that its elements and dtype are those Arith gives
// on either backend. It counts against the host memory limit as
// NewHostArray does.
func (rt *Runtime) HostArith(op Operator, x, y HostOperand) (*HostArray, error) {
	k, a, first, second, err := arrange(op, x.Array, y.Array, x.Number, y.Number)
	if err != nil {
		return nil, err
	}
	var xb []byte
	if second != nil {
		if err := sameOperands(first.shape, first.dtype, second.shape, second.dtype); err != nil {
			return nil, err
		}
		xb = second.data
	}
	dt := first.dtype
	if promotes(op, dt, second == nil, a) {
		dt = device.Float64
	}
	out, err := rt.NewHostArray(first.shape, dt, false)
	if err != nil {
		return nil, err
	}
	err = accessAll(func() {
		if dt == first.dtype {
			k.ApplyTo(dt, out.data, first.data, a, xb)
			return
		}
		kernels.Copy(dt, out.data, first.dtype, first.data)
		if xb != nil {
			wide := make([]byte, len(out.data))
			kernels.Copy(dt, wide, second.dtype, xb)
			xb = wide
		}
		k.Apply(dt, out.data, a, xb)
	}, first, second)
	goruntime.KeepAlive(first) // pinned or mapped memory must outlive the loop
	goruntime.KeepAlive(second)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// HostNeg is Neg on a host array.
func (rt *Runtime) HostNeg(x *HostArray) (*HostArray, error) {
	if x == nil {
		return nil, badGoArgument("HostNeg", "x is nil")
	}
	return rt.HostArith(OpMul, HostOperand{Array: x}, HostOperand{Number: -1})
}
