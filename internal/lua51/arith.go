package lua51

import (
	"math"
	"strconv"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// The arithmetic handlers. Each takes the numbers' path inline, as
// gopher-lua's does (one handler per operator: one shared handler that
// switches on the opcode made an arithmetic loop about 8% slower than
// gopher-lua's), and leaves everything else to arith, which is Lua
// 5.1's luaV_arith: numeric strings are converted first, then the
// operands' metamethod is called, and only then is it an error that names
// the operand, as luaG_aritherror does. gopher-lua tries the metamethod
// first and words the error its own way ("cannot perform add operation
// between nil and number").

func opAdd(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(x+y))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opSub(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(x-y))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opMul(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(x*y))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opDiv(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(x/y))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opMod(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, mod(float64(x), float64(y)))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opPow(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b, c := rk(rg, cf, int(inst&0x1ff)), rk(rg, cf, int(inst>>9)&0x1ff)
	if x, ok := b.(lua.LNumber); ok {
		if y, ok := c.(lua.LNumber); ok {
			setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, pow(float64(x), float64(y)))
			return 0
		}
	}
	arith(L, inst, b, c)
	return 0
}

func opUnm(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	b := registers(rg)[frameBase(cf)+int(inst&0x1ff)]
	if x, ok := b.(lua.LNumber); ok {
		setNumber(rg, frameBase(cf)+int(inst>>18)&0xff, float64(-x))
		return 0
	}
	arith(L, inst, b, b)
	return 0
}

// mod is Lua 5.1's luai_nummod, a - floor(a/b)*b, with each step rounded
// as C rounds it (the conversion keeps Go from fusing the multiply and the
// subtraction where the processor could). gopher-lua's is math.Mod, exact
// where this is not: 2^900 % 3 is 0 in Lua 5.1 and 1 in math.Mod's.
func mod(a, b float64) float64 {
	return a - float64(math.Floor(a/b)*b)
}

// Arith is the arithmetic opcode op (lua.OP_ADD to lua.OP_POW, or
// lua.OP_UNM, which negates a) on two numbers, as Lua 5.1 computes it and
// as the virtual machine does here: a compiler that folds constants gives
// the same answers with it. It panics on any other opcode.
func Arith(op int, a, b float64) float64 {
	switch op {
	case lua.OP_ADD:
		return a + b
	case lua.OP_SUB:
		return a - b
	case lua.OP_MUL:
		return a * b
	case lua.OP_DIV:
		return a / b
	case lua.OP_MOD:
		return mod(a, b)
	case lua.OP_POW:
		return pow(a, b)
	case lua.OP_UNM:
		return -a
	}
	panic("lua51.Arith: not an arithmetic opcode")
}

var arithEvents = [...]string{
	lua.OP_ADD: "__add", lua.OP_SUB: "__sub", lua.OP_MUL: "__mul", lua.OP_DIV: "__div",
	lua.OP_MOD: "__mod", lua.OP_POW: "__pow", lua.OP_UNM: "__unm",
}

// arith is the operation of inst on b and c where either is not a number.
func arith(L *lua.LState, inst uint32, b, c lua.LValue) {
	op := int(inst >> 26)
	x, okb := toNumber(b)
	y, okc := toNumber(c)
	var v lua.LValue
	if okb && okc {
		setNumber(registryOf(L), frameBase(*currentFrame(L))+int(inst>>18)&0xff, Arith(op, x, y))
		return
	}
	var ok bool
	if v, ok = binaryMeta(L, b, c, arithEvents[op]); !ok {
		// luaG_aritherror blames the first operand unless it is a number.
		bad, operand := c, int(inst>>9)&0x1ff
		if !okb {
			bad, operand = b, int(inst&0x1ff)
		}
		typeError(L, bad, operand, "perform arithmetic on")
	}
	setRegister(registryOf(L), frameBase(*currentFrame(L))+int(inst>>18)&0xff, v)
}

// toNumber is luaV_tonumber: a number, or a string that reads as one.
func toNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return str2d(string(v))
	}
	return 0, false
}

// binaryMeta is call_binTM: the event's metamethod of a, else of b, called
// with a and b. ok is false when neither has one.
func binaryMeta(L *lua.LState, a, b lua.LValue, event string) (v lua.LValue, ok bool) {
	tm := L.GetMetaField(a, event)
	if tm == lua.LNil {
		tm = L.GetMetaField(b, event)
	}
	if tm == lua.LNil {
		return nil, false
	}
	return callMeta(L, tm, a, b), true
}

// callMeta calls the metamethod tm with a and b and returns its first
// result. A metamethod that cannot be called fails as Lua 5.1's call does.
func callMeta(L *lua.LState, tm, a, b lua.LValue) lua.LValue {
	if !callable(L, tm) {
		L.RaiseError("attempt to call a %s value", tm.Type().String())
	}
	return call2(L, tm, a, b)
}

// opConcat is Lua 5.1's luaV_concat over registers B to C: from the right,
// as many strings and numbers as follow each other are joined at once,
// numbers written as "%.14g"; any other pair goes to its __concat. The
// operands are worked on in a copy, as Lua 5.1 works on them in place, so
// that an error blames the register Lua 5.1 blames.
func opConcat(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	base := frameBase(cf)
	first, last := int(inst&0x1ff), int(inst>>9)&0x1ff
	var small [8]lua.LValue
	vals := small[:0]
	vals = append(vals, registers(rg)[base+first:base+last+1]...)
	top := len(vals)
	for top > 1 {
		a, b := vals[top-2], vals[top-1]
		if !stringLike(a) || !stringLike(b) {
			v, ok := binaryMeta(L, a, b, "__concat")
			if !ok {
				bad, at := a, top-2
				if stringLike(a) {
					bad, at = b, top-1
				}
				typeError(L, bad, first+at, "concatenate")
			}
			vals[top-2] = v
			top--
			continue
		}
		n := 2
		for n < top && stringLike(vals[top-n-1]) {
			n++
		}
		if growthCheck != nil {
			grow(L, textSize(vals[top-n:top]))
		}
		vals[top-n] = joinText(vals[top-n : top])
		top -= n - 1
	}
	setRegister(registryOf(L), base+int(inst>>18)&0xff, vals[0])
	return 0
}

func stringLike(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// joinText joins strings and numbers, numbers written as Lua 5.1 writes
// them.
func joinText(vs []lua.LValue) lua.LString {
	var small [8]string
	parts := small[:0]
	size := 0
	for _, v := range vs {
		var s string
		switch v := v.(type) {
		case lua.LString:
			s = string(v)
		case lua.LNumber:
			s = numberText(float64(v))
		}
		parts = append(parts, s)
		size += len(s)
	}
	buf := make([]byte, 0, size)
	for _, s := range parts {
		buf = append(buf, s...)
	}
	return lua.LString(unsafe.String(unsafe.SliceData(buf), len(buf)))
}

// numberText is numberString with a short way for integers, which "%.14g"
// writes in full below 10^14.
func numberText(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e14 && !(f == 0 && math.Signbit(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return numberString(lua.LNumber(f))
}

// opForprep is Lua 5.1's OP_FORPREP: the initial value, limit and step are
// converted to numbers in place (numeric strings included: `for i = "10",
// "1", "-2"` counts down from 10), or the loop fails with Lua 5.1's words;
// gopher-lua refuses strings and checks the limit only at the first
// iteration. Then R(A) -= R(A+2) and the loop jumps to its test.
func opForprep(L *lua.LState, inst uint32, _ unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	ra := frameBase(cf) + int(inst>>18)&0xff
	regs := registers(rg)
	init, ok1 := regs[ra].(lua.LNumber)
	_, ok2 := regs[ra+1].(lua.LNumber)
	step, ok3 := regs[ra+2].(lua.LNumber)
	if !ok1 || !ok2 || !ok3 {
		for i, what := range [...]string{"initial value", "limit", "step"} {
			n, ok := toNumber(regs[ra+i])
			if !ok {
				L.RaiseError("'for' %s must be a number", what)
			}
			setNumber(rg, ra+i, n)
			regs = registers(rg)
		}
		init, step = regs[ra].(lua.LNumber), regs[ra+2].(lua.LNumber)
	}
	setNumber(rg, ra, float64(init-step))
	*(*int)(unsafe.Add(cf, vmLayout.pc)) += int(inst&0x3ffff) - opMaxArgSbx
	return 0
}

const opMaxArgSbx = (1<<18 - 1) >> 1
