package runtime_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
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

// asFloat64 is a new float64 array holding a's elements converted.
func asFloat64(t *testing.T, rt *runtime.Runtime, a *runtime.Array) *runtime.Array {
	t.Helper()
	f, err := rt.DeviceArray(a.Shape(), runtime.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Copy(f, a); err != nil {
		t.Fatal(err)
	}
	return f
}

// inPlaceFloat64 is inPlace on y and x converted to float64: what an
// operator of integer arrays that NumPy promotes must equal.
func inPlaceFloat64(t *testing.T, rt *runtime.Runtime, name string, y, x *runtime.Array) []byte {
	t.Helper()
	fy, fx := asFloat64(t, rt, y), asFloat64(t, rt, x)
	defer fy.Free()
	defer fx.Free()
	return inPlace(t, rt, name, fy, fx)
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
				V, err := rt.Full([]int{7, 9}, v, dt)
				if err != nil {
					continue // not a value of dt
				}
				if h, _ := V.Float64s(); h[0] != v {
					V.Free()
					continue // not an element of dt
				}
				// / of integers is true division, as NumPy's: the
				// in-place kernel on the operands as float64.
				want, wantDT := inPlace, dt
				if op == runtime.OpDiv && !dt.IsFloat() {
					want, wantDT = inPlaceFloat64, runtime.Float64
				}
				for _, c := range []struct {
					what string
					x, y runtime.Operand
					want []byte
				}{
					{"A op B", runtime.Operand{Array: A}, runtime.Operand{Array: B}, want(t, rt, name, A, B)},
					{"A op v", runtime.Operand{Array: A}, runtime.Operand{Number: v}, want(t, rt, name, A, V)},
					{"v op A", runtime.Operand{Number: v}, runtime.Operand{Array: A}, want(t, rt, name, V, A)},
				} {
					what := fmt.Sprintf("%s: %s with %s %v v=%v", dt, c.what, op, op, v)
					got, err := rt.Arith(op, c.x, c.y)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if got.DType() != wantDT {
						t.Errorf("%s: a %s array, want %s", what, got.DType(), wantDT)
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
		minusOne := -1.0
		if dt == runtime.Uint8 {
			minusOne = 255 // -1 modulo 2^8; a full of -1 saturates to 0
		}
		M, _ := rt.Full([]int{7, 9}, minusOne, dt)
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
				if !bytes.Equal(h.Bytes(), hostBytes(t, d)) || h.DType() != d.DType() {
					t.Errorf("%s %v (operands %d): the host's result (%s) differs from the device's (%s)", dt, op, side, h.DType(), d.DType())
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

// Integer arrays compute in integers and promote as NumPy does: an
// operator with a number that is not an integer, or a /, makes a float64
// array from the operands converted; with an integer number the array
// stays integer and wraps. The host's operators give the same arrays.
func TestIntegerOperatorsPromoteAsNumPyDoes(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	for _, dt := range []device.DType{runtime.Int32, runtime.Int64, runtime.Uint8} {
		A, B := operandValues(t, rt, []int{3, 5}, dt), operandValues(t, rt, []int{3, 5}, dt)
		hA, _ := A.CopyToHost(nil)
		hB, _ := B.CopyToHost(nil)
		arr, num := func(a *runtime.Array) runtime.Operand { return runtime.Operand{Array: a} }, func(v float64) runtime.Operand { return runtime.Operand{Number: v} }
		harr, hnum := func(a *runtime.HostArray) runtime.HostOperand { return runtime.HostOperand{Array: a} }, func(v float64) runtime.HostOperand { return runtime.HostOperand{Number: v} }
		full := func(v float64) *runtime.Array {
			F, err := rt.Full([]int{3, 5}, v, runtime.Float64)
			if err != nil {
				t.Fatal(err)
			}
			return F
		}
		fA := asFloat64(t, rt, A)
		for _, tc := range []struct {
			what   string
			op     runtime.Operator
			x, y   runtime.Operand
			hx, hy runtime.HostOperand
			kernel string
			ky, kx *runtime.Array // the float64 kernel's operands
		}{
			{"A * 1.5", runtime.OpMul, arr(A), num(1.5), harr(hA), hnum(1.5), "mul", fA, full(1.5)},
			{"A + 0.5", runtime.OpAdd, arr(A), num(0.5), harr(hA), hnum(0.5), "add", fA, full(0.5)},
			{"A - 0.25", runtime.OpSub, arr(A), num(0.25), harr(hA), hnum(0.25), "sub", fA, full(0.25)},
			{"0.5 - A", runtime.OpSub, num(0.5), arr(A), hnum(0.5), harr(hA), "sub", full(0.5), fA},
			{"A + nan", runtime.OpAdd, arr(A), num(math.NaN()), harr(hA), hnum(math.NaN()), "add", fA, full(math.NaN())},
			{"A * 2^63", runtime.OpMul, arr(A), num(0x1p63), harr(hA), hnum(0x1p63), "mul", fA, full(0x1p63)},
			{"A / 2", runtime.OpDiv, arr(A), num(2), harr(hA), hnum(2), "div", fA, full(2)},
			{"3 / A", runtime.OpDiv, num(3), arr(A), hnum(3), harr(hA), "div", full(3), fA},
			{"A / B", runtime.OpDiv, arr(A), arr(B), harr(hA), harr(hB), "div", fA, asFloat64(t, rt, B)},
		} {
			what := fmt.Sprintf("%s %s", dt, tc.what)
			got, err := rt.Arith(tc.op, tc.x, tc.y)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			h, err := rt.HostArith(tc.op, tc.hx, tc.hy)
			if err != nil {
				t.Fatalf("%s on the host: %v", what, err)
			}
			want := inPlace(t, rt, tc.kernel, tc.ky, tc.kx)
			if got.DType() != runtime.Float64 || h.DType() != runtime.Float64 {
				t.Errorf("%s: %s on the device, %s on the host; NumPy's is float64", what, got.DType(), h.DType())
			} else if !bytes.Equal(hostBytes(t, got), want) || !bytes.Equal(h.Bytes(), want) {
				t.Errorf("%s: differs from float64 arithmetic on the converted operands", what)
			}
		}
		for _, v := range []float64{3, -1, 1 << 40} {
			got, err := rt.Arith(runtime.OpAdd, arr(A), num(v))
			if err != nil || got.DType() != dt {
				t.Errorf("%s A + %v: %v, %v; want a %s array", dt, v, got, err, dt)
			}
		}
	}
}

// The examples: integers beyond 2^53 and a uint8 negated.
func TestIntegerOperatorsWrapAndStayExact(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	h, _ := runtime.HostArrayFromFloats([]float64{0x1p53 + 2}, []int{1}, runtime.Int64)
	x, _ := rt.ToDevice(h)
	x1, err := rt.Arith(runtime.OpAdd, runtime.Operand{Array: x}, runtime.Operand{Number: 1})
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.Arith(runtime.OpSub, runtime.Operand{Array: x1}, runtime.Operand{Array: x})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := d.Float64s(); v[0] != 1 {
		t.Errorf("int64 (x + 1) - x with x = 2^53 + 2 is %v, want 1", v[0])
	}
	h, _ = runtime.HostArrayFromFloats([]float64{1, 0, 200}, []int{3}, runtime.Uint8)
	u, _ := rt.ToDevice(h)
	n, err := rt.Neg(u)
	if err != nil {
		t.Fatal(err)
	}
	hn, err := rt.HostNeg(h)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := n.Float64s(); fmt.Sprint(v) != "[255 0 56]" || fmt.Sprint(hn.Floats()) != "[255 0 56]" {
		t.Errorf("-uint8{1, 0, 200} is %v on the device and %v on the host, want [255 0 56]", v, hn.Floats())
	}
	m, _ := rt.Arith(runtime.OpSub, runtime.Operand{Array: u}, runtime.Operand{Number: 1})
	if v, _ := m.Float64s(); fmt.Sprint(v) != "[0 255 199]" {
		t.Errorf("uint8{1, 0, 200} - 1 is %v, want [0 255 199]", v)
	}
}

// The in-place kernels refuse a number an integer array cannot take, as
// PyTorch refuses a float alpha for an integral tensor, naming the array's
// dtype and the number, and leave the array as it was.
func TestInPlaceKernelsRefuseANonIntegerNumberForAnIntegerArray(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	x, _ := rt.Full([]int{4}, 7, runtime.Int32)
	y, _ := rt.Full([]int{4}, 1, runtime.Int32)
	for _, tc := range []struct {
		op   string
		a    float64
		want string
	}{
		{"scale", 1.5, "x is int32, so factor must be an integer of magnitude below 2^63, not 1.5"},
		{"add_scalar", math.NaN(), "x is int32, so a must be an integer of magnitude below 2^63, not nan"},
		{"rdiv", math.Inf(-1), "x is int32, so a must be an integer of magnitude below 2^63, not -inf"},
		{"div_scalar", 0x1p63, "x is int32, so a must be an integer of magnitude below 2^63, not 9.2233720368548e+18"},
		{"axpy", -0.5, "y is int32, so a must be an integer of magnitude below 2^63, not -0.5"},
	} {
		op := kernels.LookupElementwise(tc.op)
		var other *runtime.Array
		target := x
		if op.Arrays == 2 {
			target, other = y, x
		}
		if err := rt.Elementwise(op, target, tc.a, other); err == nil || err.Error() != tc.want {
			t.Errorf("%s with %v: %v, want %q", tc.op, tc.a, err, tc.want)
		}
	}
	if v, _ := x.Float64s(); fmt.Sprint(v) != "[7 7 7 7]" {
		t.Errorf("x was touched: %v", v)
	}
	if err := rt.Elementwise(kernels.LookupElementwise("scale"), x, -0x1p62, nil); err != nil {
		t.Errorf("an integer below 2^63: %v", err)
	}
}
