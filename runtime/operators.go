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
// broadcast. The new array comes from the pool, like every other; a loop
// that must not allocate uses the in-place kernels instead.
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
	return rt.elementwiseNew(k, first, a, second)
}

// Neg returns a new array holding -x: each element's sign flipped, zeros
// and NaNs included. Integer dtypes saturate, as every kernel's stores do:
// int32's smallest value becomes its largest, and a uint8 becomes 0.
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

// HostArith is Arith on host arrays: a new HostArray, computed by the CPU
// backend's kernels, so that its elements are those Arith gives on either
// backend. It counts against the host memory limit as NewHostArray does.
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
	out, err := rt.NewHostArray(first.shape, first.dtype, false)
	if err != nil {
		return nil, err
	}
	k.ApplyTo(first.dtype, out.data, first.data, a, xb)
	goruntime.KeepAlive(first) // pinned or mapped memory must outlive the loop
	goruntime.KeepAlive(second)
	return out, nil
}

// HostNeg is Neg on a host array.
func (rt *Runtime) HostNeg(x *HostArray) (*HostArray, error) {
	return rt.HostArith(OpMul, HostOperand{Array: x}, HostOperand{Number: -1})
}
