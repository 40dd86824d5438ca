package jit

// The C of loads, stores' values and expressions, which cuda.go's
// statements write.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gluaproject/glua/device"
)

// storeValue converts x of type t to the stored form of d: floats into
// integers saturate (as device.Set), integers wrap.
func storeValue(d device.DType, t Type, x string) string {
	switch d {
	case device.Float32:
		return "(float)(" + x + ")"
	case device.Float64:
		return "(double)(" + x + ")"
	case device.Float16:
		return "f32_to_f16((float)(" + x + "))"
	case device.BFloat16:
		return "f32_to_bf16((float)(" + x + "))"
	}
	if t.IsFloat() {
		return map[device.DType]string{device.Int32: "sat_i32", device.Int64: "sat_i64", device.Uint8: "sat_u8"}[d] + "((double)(" + x + "))"
	}
	return "(" + storage(d) + ")(" + x + ")"
}

func (e *emitter) load(l *Load) string {
	v := fmt.Sprintf("%s[%s]", arrayName(l.Arr), e.offset(l.Arr, l.Index))
	if el, ok := e.elements[l.Arr]; ok {
		v = el
	}
	switch l.Arr.DType {
	case device.Float16:
		if _, ok := e.elements[l.Arr]; ok && e.plainHalves {
			v = "F16Plain::load(" + v + ")"
		} else {
			v = "f16_to_f32(" + v + ")"
		}
	case device.BFloat16:
		v = "bf16_to_f32(" + v + ")"
	case device.Int32, device.Uint8:
		v = "(i64)" + v
	}
	if e.p.CheckBounds {
		return fmt.Sprintf("(%s ? %s : (glua_stop = true, (%s)0))", e.inBounds(l.Arr, l.Index, l.Line), v, ctype(l.Type()))
	}
	return v
}

var axes = [...]string{"x", "y", "z"}

func (e *emitter) expr(x Expr) string {
	switch ex := x.(type) {
	case *Const:
		return constant(ex)
	case *LocalGet:
		return e.local(ex.Slot)
	case *Convert:
		return fmt.Sprintf("((%s)%s)", ctype(ex.T), e.expr(ex.X))
	case *Neg:
		if ex.Type() == Int {
			return "wrap_neg(" + e.expr(ex.X) + ")"
		}
		return "neg_rn(" + e.expr(ex.X) + ")"
	case *Not:
		return "(!" + e.expr(ex.X) + ")"
	case *Arith:
		return e.arith(ex)
	case *Compare:
		op := ex.Op
		if op == "~=" {
			op = "!="
		}
		return fmt.Sprintf("(%s %s %s)", e.expr(ex.X), op, e.expr(ex.Y))
	case *Logic:
		op := "&&"
		if ex.Op == "or" {
			op = "||"
		}
		return fmt.Sprintf("(%s %s %s)", e.expr(ex.X), op, e.expr(ex.Y))
	case *Load:
		return e.load(ex)
	case *Dim:
		return dimName(ex.Arr, ex.K)
	case *Size:
		dims := make([]string, ex.Arr.Rank)
		for k := range dims {
			dims[k] = dimName(ex.Arr, k)
		}
		return "((i64)" + strings.Join(dims, " * ") + ")"
	case *Math:
		return e.math(ex)
	case *Grid:
		return fmt.Sprintf("((i64)blockIdx.%s * blockDim.%s + threadIdx.%s + 1)", axes[ex.Axis], axes[ex.Axis], axes[ex.Axis])
	case *GridSize:
		return fmt.Sprintf("((i64)gridDim.%s * blockDim.%s)", axes[ex.Axis], axes[ex.Axis])
	case *Thread:
		return fmt.Sprintf("((i64)threadIdx.%s + 1)", axes[ex.Axis])
	case *Block:
		return fmt.Sprintf("((i64)blockIdx.%s + 1)", axes[ex.Axis])
	case *BlockDim:
		return fmt.Sprintf("((i64)blockDim.%s)", axes[ex.Axis])
	case *GridDim:
		return fmt.Sprintf("((i64)gridDim.%s)", axes[ex.Axis])
	case *Shfl:
		return fmt.Sprintf("glua_shfl_%s(%s, %s)", ex.Op, e.expr(ex.X), e.expr(ex.By))
	case *LaneID:
		return "glua_laneid()"
	case *Call:
		return ex.Fn.Name + "(" + strings.Join(e.callArgs(ex), ", ") + ")"
	}
	panic(fmt.Sprintf("jit: no CUDA for %T", x))
}

// callArgs are a call's C arguments: its own, a null pointer for each
// value after the first, and the error record where the program has one.
func (e *emitter) callArgs(ex *Call) []string {
	args := make([]string, len(ex.Args))
	for i, a := range ex.Args {
		args[i] = e.expr(a)
	}
	for _, r := range ex.Fn.Results[min(1, len(ex.Fn.Results)):] {
		args = append(args, "("+ctype(ex.Fn.Locals[r].Type)+"*)0")
	}
	if e.p.HasErrorRecord() {
		args = append(args, "glua_err", "glua_stop")
	}
	return args
}

// intOps are the prelude's integer + - *, which wrap as NumPy's int64
// (C's signed overflow is undefined, and NVRTC's optimiser relies on it).
var intOps = map[string]string{"+": "wrap_add", "-": "wrap_sub", "*": "wrap_mul"}

func (e *emitter) arith(ex *Arith) string {
	x, y := e.expr(ex.X), e.expr(ex.Y)
	if f, ok := intOps[ex.Op]; ok && ex.T == Int {
		return fmt.Sprintf("%s(%s, %s)", f, x, y)
	}
	switch ex.Op {
	case "%":
		if ex.Trap > 0 {
			return fmt.Sprintf("lua_mod_checked(glua_err, glua_stop, %d, %s, %s)", ex.Trap, x, y)
		}
		return fmt.Sprintf("lua_mod(%s, %s)", x, y)
	case "^":
		if ex.T == Float32 {
			return fmt.Sprintf("powf(%s, %s)", x, y)
		}
		return fmt.Sprintf("pow(%s, %s)", x, y)
	}
	return fmt.Sprintf("(%s %s %s)", x, ex.Op, y)
}

func (e *emitter) math(ex *Math) string {
	args := make([]string, len(ex.Args))
	for i, a := range ex.Args {
		args[i] = e.expr(a)
	}
	switch ex.Fn {
	case "floor", "ceil":
		switch {
		case ex.Trap > 0:
			return fmt.Sprintf("lua_int_checked(glua_err, glua_stop, %d, %s((double)%s))", ex.Trap, ex.Fn, args[0])
		case ex.Args[0].Type() == Int:
			return args[0]
		}
		// a quotient the typer knows lies in int64's range (intQuotient)
		return fmt.Sprintf("((i64)%s((double)%s))", ex.Fn, args[0])
	case "abs":
		return "lua_abs(" + args[0] + ")"
	case "maximum", "minimum":
		return fmt.Sprintf("np_%s(%s, %s)", ex.Fn, args[0], args[1])
	case "min", "max":
		out := args[0]
		for _, a := range args[1:] {
			out = fmt.Sprintf("lua_%s(%s, %s)", ex.Fn, out, a)
		}
		return out
	}
	switch ex.Fn {
	case "frexp", "modf":
		part := map[string][2]string{"frexp": {"mant", "exp"}, "modf": {"int", "frac"}}[ex.Fn]
		k := 0
		if ex.Second {
			k = 1
		}
		return fmt.Sprintf("glua_%s_%s(%s)", ex.Fn, part[k], args[0])
	case "ldexp":
		return fmt.Sprintf("glua_ldexp(%s, %s)", args[0], args[1])
	case "deg", "rad":
		// Lua 5.1's x / (pi/180) and x * (pi/180), as the evaluator's
		op := map[string]string{"deg": "/", "rad": "*"}[ex.Fn]
		k := math.Pi / 180
		if ex.T == Float32 {
			k = float64(float32(k))
		}
		return fmt.Sprintf("(%s %s %s)", args[0], op, constant(&Const{T: ex.T, F: k}))
	}
	fn := ex.Fn
	if ex.T == Float32 {
		fn += "f" // CUDA's single-precision sinf, atan2f, powf, ...
	}
	return fn + "(" + strings.Join(args, ", ") + ")"
}

// constant writes a literal C reads back exactly.
func constant(c *Const) string {
	switch c.T {
	case Bool:
		return strconv.FormatBool(c.B)
	case Int:
		if c.I == math.MinInt64 {
			return "(-9223372036854775807LL - 1)"
		}
		return "(" + strconv.FormatInt(c.I, 10) + "LL)"
	case Float32:
		switch {
		case math.IsNaN(c.F):
			// a captured number may be NaN, which C has no literal for
			return "__int_as_float(0x7fffffff)"
		case math.IsInf(c.F, 1):
			return "__int_as_float(0x7f800000)"
		case math.IsInf(c.F, -1):
			return "__int_as_float(0xff800000)"
		}
		return "(" + strconv.FormatFloat(c.F, 'e', -1, 32) + "f)"
	}
	switch {
	case math.IsNaN(c.F):
		return "__longlong_as_double(0x7ff8000000000000LL)"
	case math.IsInf(c.F, 1):
		return "__longlong_as_double(0x7ff0000000000000LL)"
	case math.IsInf(c.F, -1):
		return "__longlong_as_double(0xfff0000000000000ULL)"
	}
	return "(" + strconv.FormatFloat(c.F, 'e', -1, 64) + ")"
}
