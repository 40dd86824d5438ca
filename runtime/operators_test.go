package runtime_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
	"github.com/gluaproject/glua/runtime"
)

// inPlace is what an operator must equal: the in-place kernel of the same
// name run on a copy of y, with numbers as full arrays, where the dtype
// holds the number exactly.
func inPlace(t *testing.T, rt *runtime.Runtime, name string, y, x *runtime.Array) []byte {
	t.Helper()
	c, err := y.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	if err := rt.Elementwise(kernels.LookupElementwise(name), c, 0, x); err != nil {
		t.Fatal(err)
	}
	h, err := c.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Bytes()
}

// operandValues are random elements of dt with integer parts, so that
// the integer dtypes see more than zeros, and a zero or two to divide by.
func operandValues(t *testing.T, rt *runtime.Runtime, shape []int, dt device.DType) *runtime.Array {
	t.Helper()
	h := randomHost(t, shape, device.Float64)
	v := h.Floats()
	for i := range v {
		v[i] *= 300
	}
	v[0] = 0
	return deviceOf(t, rt, v, shape, dt)
}

func hostBytes(t *testing.T, a *runtime.Array) []byte {
	t.Helper()
	h, err := a.CopyToHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	return h.Bytes()
}

func TestOperatorsEqualTheInPlaceKernelsOnEveryDType(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	kernelOf := map[runtime.Operator]string{runtime.OpAdd: "add", runtime.OpSub: "sub", runtime.OpMul: "mul", runtime.OpDiv: "div"}
	for _, dt := range device.DTypes {
		A, B := operandValues(t, rt, []int{7, 9}, dt), operandValues(t, rt, []int{7, 9}, dt)
		a0, b0 := hostBytes(t, A), hostBytes(t, B)
		for op, name := range kernelOf {
			for _, v := range []float64{3, -2, 0.375} {
				V, _ := rt.Full([]int{7, 9}, v, dt)
				if h, _ := V.Float64s(); h[0] != v {
					V.Free()
					continue // not an element of dt
				}
				for _, c := range []struct {
					what string
					x, y runtime.Operand
					want []byte
				}{
					{"A op B", runtime.Operand{Array: A}, runtime.Operand{Array: B}, inPlace(t, rt, name, A, B)},
					{"A op v", runtime.Operand{Array: A}, runtime.Operand{Number: v}, inPlace(t, rt, name, A, V)},
					{"v op A", runtime.Operand{Number: v}, runtime.Operand{Array: A}, inPlace(t, rt, name, V, A)},
				} {
					what := fmt.Sprintf("%s: %s with %s %v v=%v", dt, c.what, op, op, v)
					got, err := rt.Arith(op, c.x, c.y)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if !bytes.Equal(hostBytes(t, got), c.want) {
						t.Errorf("%s: differs from the in-place kernel", what)
					}
					got.Free()
				}
				V.Free()
			}
		}
		neg, err := rt.Neg(A)
		if err != nil {
			t.Fatal(err)
		}
		M, _ := rt.Full([]int{7, 9}, -1, dt)
		if !bytes.Equal(hostBytes(t, neg), inPlace(t, rt, "mul", A, M)) {
			t.Errorf("%s: -A differs from A multiplied by -1", dt)
		}
		if !bytes.Equal(hostBytes(t, A), a0) || !bytes.Equal(hostBytes(t, B), b0) {
			t.Errorf("%s: an operator changed its operand", dt)
		}
	}
}

func TestOperatorsOnHostArraysEqualThoseOnTheDevice(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, dt := range device.DTypes {
		A, B := operandValues(t, rt, []int{5, 4}, dt), operandValues(t, rt, []int{5, 4}, dt)
		ha, _ := A.CopyToHost(nil)
		hb, _ := B.CopyToHost(nil)
		for _, op := range []runtime.Operator{runtime.OpAdd, runtime.OpSub, runtime.OpMul, runtime.OpDiv} {
			for _, side := range []int{0, 1, 2} { // both arrays, number right, number left
				x, y := runtime.Operand{Array: A}, runtime.Operand{Array: B}
				hx, hy := runtime.HostOperand{Array: ha}, runtime.HostOperand{Array: hb}
				if side == 1 {
					y, hy = runtime.Operand{Number: 0.75}, runtime.HostOperand{Number: 0.75}
				} else if side == 2 {
					x, hx = runtime.Operand{Number: -1.5}, runtime.HostOperand{Number: -1.5}
				}
				d, err := rt.Arith(op, x, y)
				if err != nil {
					t.Fatal(err)
				}
				h, err := rt.HostArith(op, hx, hy)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(h.Bytes(), hostBytes(t, d)) {
					t.Errorf("%s %v (operands %d): the host's result differs from the device's", dt, op, side)
				}
				d.Free()
			}
		}
		hn, _ := rt.HostNeg(ha)
		dn, _ := rt.Neg(A)
		if !bytes.Equal(hn.Bytes(), hostBytes(t, dn)) {
			t.Errorf("%s: -h differs from -A", dt)
		}
	}
}

// A refused operator allocates nothing and leaves its operands as they
// were.
func TestOperatorsCheckTheirOperandsFirst(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	other := newCPU(t, runtime.Options{})
	A, _ := rt.Full([]int{2, 3}, 7, runtime.Float32)
	B, _ := rt.Full([]int{3, 2}, 1, runtime.Float32)
	D, _ := rt.Full([]int{2, 3}, 1, runtime.Float64)
	F, _ := rt.Full([]int{2, 3}, 1, runtime.Float32)
	F.Free()
	X, _ := other.Full([]int{2, 3}, 1, runtime.Float32)
	arr := func(a *runtime.Array) runtime.Operand { return runtime.Operand{Array: a} }
	num := runtime.Operand{Number: 2}
	before := rt.LiveArrays()
	for _, tc := range []struct {
		op   runtime.Operator
		x, y runtime.Operand
		want string
	}{
		{runtime.OpAdd, arr(A), arr(B), "shapes 2x3 and 3x2 differ"},
		{runtime.OpMul, arr(A), arr(D), "dtypes float32 and float64 differ"},
		{runtime.OpSub, arr(A), arr(F), "right operand: use of freed array"},
		{runtime.OpSub, arr(F), num, "left operand: use of freed array"},
		{runtime.OpDiv, num, arr(F), "right operand: use of freed array"},
		{runtime.OpAdd, arr(A), arr(X), "right operand belongs to another runtime"},
		{runtime.OpAdd, num, num, "+ of two numbers"},
		{'%', arr(A), num, "unknown operator '%'"},
	} {
		got, err := rt.Arith(tc.op, tc.x, tc.y)
		if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
			t.Errorf("%v: %v, %v; want an error containing %q", tc.op, got, err, tc.want)
		}
	}
	if _, err := rt.Neg(F); !errors.Is(err, runtime.ErrFreed) {
		t.Errorf("-freed: %v", err)
	}
	if n := rt.LiveArrays(); n != before {
		t.Errorf("refused operators left %d arrays, want %d", n, before)
	}
	if s, _ := rt.Sum(A); s != 42 {
		t.Errorf("A was touched: sum %v", s)
	}
	hA, _ := A.CopyToHost(nil)
	hB, _ := B.CopyToHost(nil)
	if _, err := rt.HostArith(runtime.OpAdd, runtime.HostOperand{Array: hA}, runtime.HostOperand{Array: hB}); err == nil || err.Error() != "shapes 2x3 and 3x2 differ (numbers broadcast, arrays do not)" {
		t.Errorf("host arrays of two shapes: %v", err)
	}
}

func TestOperatorsOnEmptyArraysGiveEmptyArrays(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	E, _ := rt.DeviceArray([]int{0, 3}, runtime.Float16)
	got, err := rt.Arith(runtime.OpDiv, runtime.Operand{Number: 1}, runtime.Operand{Array: E})
	if err != nil || got.Size() != 0 || fmt.Sprint(got.Shape()) != "[0 3]" || got.DType() != runtime.Float16 {
		t.Fatalf("1 / empty: %v, %v", got, err)
	}
}
