package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// operatorsRuntime is what the array operators need from a runtime.
type operatorsRuntime interface {
	Arith(op runtime.Operator, x, y runtime.Operand) (*runtime.Array, error)
	Neg(x *runtime.Array) (*runtime.Array, error)
	HostArith(op runtime.Operator, x, y runtime.HostOperand) (*runtime.HostArray, error)
	HostNeg(x *runtime.HostArray) (*runtime.HostArray, error)
	giver
}

// operators are the arithmetic metamethods of DeviceArray and HostArray:
// A + B, 2 * A, -A, ..., each a new array. gopher-lua looks a binary
// operator up in the left operand's metatable, then the right's, and a
// DeviceArray's metatable is one of many (arraytypes.go), so every one of
// them holds these. __eq is left out on purpose: Lua calls it only to
// compare two userdata, and A == B stays identity, as Lua requires of it.
type operators struct{ rt operatorsRuntime }

var arithEvents = map[string]runtime.Operator{
	"__add": runtime.OpAdd, "__sub": runtime.OpSub, "__mul": runtime.OpMul, "__div": runtime.OpDiv,
}

// missingEvents are Lua's other arithmetic operators, which arrays lack:
// without an entry, gopher-lua's message would not say which operand
// was at fault.
var missingEvents = map[string]string{"__mod": "%", "__pow": "^"}

// setOperators puts the metamethods into mt.
func setOperators(L *lua.LState, mt *lua.LTable, rt operatorsRuntime) {
	o := operators{rt}
	for event, op := range arithEvents {
		mt.RawSetString(event, L.NewFunction(o.binary(op)))
	}
	mt.RawSetString("__unm", L.NewFunction(o.neg))
	for event, symbol := range missingEvents {
		mt.RawSetString(event, L.NewFunction(noOperator(symbol)))
	}
}

// copyOperators puts the metamethods of from into to.
func copyOperators(to, from *lua.LTable) {
	for event := range arithEvents {
		to.RawSetString(event, from.RawGetString(event))
	}
	for event := range missingEvents {
		to.RawSetString(event, from.RawGetString(event))
	}
	to.RawSetString("__unm", from.RawGetString("__unm"))
}

// binary is the metamethod of op: device arrays and numbers go to Arith,
// host arrays and numbers to HostArith. Errors are named for the
// expression as the script wrote it: "DeviceArray + number: ...".
func (o operators) binary(op runtime.Operator) lua.LGFunction {
	return func(L *lua.LState) int {
		lv, rv := L.Get(1), L.Get(2)
		name := typeName(lv) + " " + op.String() + " " + typeName(rv)
		if isHost(lv) || isHost(rv) {
			x, y := hostOperand(L, name, lv, "left"), hostOperand(L, name, rv, "right")
			h, err := o.rt.HostArith(op, x, y)
			if err != nil {
				raise(L, name, err)
			}
			pushHost(L, h)
			return 1
		}
		x, y := deviceOperand(L, name, lv, "left"), deviceOperand(L, name, rv, "right")
		a, err := o.rt.Arith(op, x, y)
		if err != nil {
			raise(L, name, err)
		}
		pushNew(L, o.rt, a)
		return 1
	}
}

// neg is __unm; gopher-lua passes the operand once.
func (o operators) neg(L *lua.LState) int {
	v := L.Get(1)
	name := "-" + typeName(v)
	if h, ok := hostValue(v); ok {
		n, err := o.rt.HostNeg(h)
		if err != nil {
			raise(L, name, err)
		}
		pushHost(L, n)
		return 1
	}
	x, ok := userValue[*runtime.Array](v)
	if !ok {
		badArgument(L, "%s: the operand must be a DeviceArray or a HostArray, not %s", name, typeName(v))
	}
	a, err := o.rt.Neg(x)
	if err != nil {
		raise(L, name, err)
	}
	pushNew(L, o.rt, a)
	return 1
}

func noOperator(symbol string) lua.LGFunction {
	return func(L *lua.LState) int {
		badArgument(L, "%s %s %s: arrays have no %s operator (they have +, -, *, / and unary -)",
			typeName(L.Get(1)), symbol, typeName(L.Get(2)), symbol)
		return 0
	}
}

func hostValue(v lua.LValue) (*runtime.HostArray, bool) {
	ud, ok := v.(*lua.LUserData)
	if !ok {
		return nil, false
	}
	h, ok := ud.Value.(*runtime.HostArray)
	return h, ok
}

func isHost(v lua.LValue) bool {
	_, ok := hostValue(v)
	return ok
}

// deviceOperand is v as one side of an operator on device arrays.
func deviceOperand(L *lua.LState, name string, v lua.LValue, side string) runtime.Operand {
	switch v := v.(type) {
	case lua.LNumber:
		return runtime.Operand{Number: float64(v)}
	case *lua.LUserData:
		if a, ok := v.Value.(*runtime.Array); ok {
			return runtime.Operand{Array: a}
		}
	}
	badArgument(L, "%s: the %s operand must be a DeviceArray or a number, not %s", name, side, typeName(v))
	return runtime.Operand{}
}

// hostOperand is v as one side of an operator with a HostArray.
func hostOperand(L *lua.LState, name string, v lua.LValue, side string) runtime.HostOperand {
	switch v := v.(type) {
	case lua.LNumber:
		return runtime.HostOperand{Number: float64(v)}
	case *lua.LUserData:
		switch a := v.Value.(type) {
		case *runtime.HostArray:
			return runtime.HostOperand{Array: a}
		case *runtime.Array:
			badArgument(L, "%s: one array is on the device and one on the host; move one over first (cuda.to_device(h) or d:copy_to_host())", name)
		}
	}
	badArgument(L, "%s: the %s operand must be a HostArray or a number, not %s", name, side, typeName(v))
	return runtime.HostOperand{}
}
