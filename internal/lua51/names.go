package lua51

import (
	"fmt"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 names what a runtime error is about: "attempt to call global
// 'x' (a nil value)", "attempt to index field 'k' (a number value)". It
// finds the name as ldebug.c's getobjname does, from the function's code:
// a register that is an active local is named by it; otherwise the
// instruction that last wrote the register before the failing one, found
// by running the code symbolically up to it, says whether the value came
// from a global, a field, an upvalue or a method, with the name that
// instruction holds. gopher-lua's instructions are Lua 5.1's plus four of
// its own: MOVEN (a MOVE followed by more MOVEs, which are in the code and
// read as MOVEs here), GETTABLEKS and SETTABLEKS (GETTABLE and SETTABLE
// with a string constant key) and NOP.

// typeError is luaG_typeerror for the operand of the current instruction
// that holds v (an RK operand: a constant has no name): it raises "attempt
// to <op> <kind> '<name>' (a <type> value)", or "attempt to <op> a <type>
// value" where no name is known.
func typeError(L *lua.LState, v lua.LValue, operand int, op string) {
	L.RaiseError("%s", typeErrorText(L, *currentFrame(L), v, operand, op))
}

// typeErrorText is typeError's message for the frame cf.
func typeErrorText(L *lua.LState, cf unsafe.Pointer, v lua.LValue, operand int, op string) string {
	t := v.Type().String()
	if operand&opBitRk == 0 {
		if cf != nil && !frameFn(cf).IsG {
			if kind, name := objectName(frameFn(cf).Proto, framePc(cf)-1, operand); kind != "" {
				return fmt.Sprintf("attempt to %s %s '%s' (a %s value)", op, kind, name, t)
			}
		}
	}
	return fmt.Sprintf("attempt to %s a %s value", op, t)
}

// objectName is getobjname: how register reg got its value at instruction
// pc of p ("local", "global", "field", "upvalue", "method") and the name,
// or "" where that cannot be told.
func objectName(p *lua.FunctionProto, pc, reg int) (kind, name string) {
	if name, ok := localName(p, reg+1, pc); ok {
		return "local", name
	}
	i, ok := lastWrite(p, pc, reg)
	if !ok {
		return "", ""
	}
	a, b, c := int(i>>18)&0xff, int(i&0x1ff), int(i>>9)&0x1ff
	switch int(i >> 26) {
	case lua.OP_GETGLOBAL:
		if s, ok := p.Constants[int(i&0x3ffff)].(lua.LString); ok {
			return "global", string(s)
		}
	case lua.OP_MOVE, lua.OP_MOVEN:
		if b < a {
			return objectName(p, pc, b)
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		return "field", constantName(p, c)
	case lua.OP_GETUPVAL:
		if b < len(p.DbgUpvalues) {
			return "upvalue", p.DbgUpvalues[b]
		}
		return "upvalue", "?"
	case lua.OP_SELF:
		return "method", constantName(p, c)
	}
	return "", ""
}

// constantName is kname: the string constant an RK operand names, or "?".
func constantName(p *lua.FunctionProto, rk int) string {
	if rk&opBitRk != 0 {
		if s, ok := p.Constants[rk&^opBitRk].(lua.LString); ok {
			return string(s)
		}
	}
	return "?"
}

// localName is luaF_getlocalname: the name of the n-th local active at
// instruction pc.
func localName(p *lua.FunctionProto, n, pc int) (string, bool) {
	for _, v := range p.DbgLocals {
		if v.StartPc > pc {
			break
		}
		if pc < v.EndPc {
			n--
			if n == 0 {
				return v.Name, true
			}
		}
	}
	return "", false
}

// lastWrite is the tracing half of Lua 5.1's symbexec: the last
// instruction before lastpc that wrote register reg, following forward
// jumps that do not pass lastpc. ok is false where none did (Lua 5.1 then
// finds the function's final RETURN, which names nothing).
func lastWrite(p *lua.FunctionProto, lastpc, reg int) (uint32, bool) {
	code := p.Code
	last := -1
	if lastpc > len(code) {
		lastpc = len(code)
	}
	for pc := 0; pc < lastpc; pc++ {
		i := code[pc]
		op := int(i >> 26)
		a, b, c := int(i>>18)&0xff, int(i&0x1ff), int(i>>9)&0x1ff
		if setsA[op] && a == reg {
			last = pc
		}
		switch op {
		case lua.OP_LOADNIL:
			if a <= reg && reg <= b {
				last = pc
			}
		case lua.OP_SELF:
			if reg == a+1 {
				last = pc
			}
		case lua.OP_TFORLOOP:
			if reg >= a+2 {
				last = pc
			}
		case lua.OP_CALL, lua.OP_TAILCALL:
			if reg >= a {
				last = pc
			}
		case lua.OP_JMP, lua.OP_FORLOOP, lua.OP_FORPREP:
			sbx := int(i&0x3ffff) - opMaxArgSbx
			if dest := pc + 1 + sbx; pc < dest && dest <= lastpc {
				pc += sbx
			}
		case lua.OP_SETLIST:
			if c == 0 {
				pc++
			}
		case lua.OP_CLOSURE:
			if bx := int(i & 0x3ffff); bx < len(p.FunctionPrototypes) {
				pc += int(p.FunctionPrototypes[bx].NumUpvalues)
			}
		}
	}
	if last < 0 {
		return 0, false
	}
	return code[last], true
}

// setsA marks the instructions that write register A, Lua 5.1's testAMode
// (TEST and TESTSET among them), with gopher-lua's own MOVEN and
// GETTABLEKS.
var setsA = func() (s [lua.OP_NOP + 1]bool) {
	for _, op := range []int{
		lua.OP_MOVE, lua.OP_MOVEN, lua.OP_LOADK, lua.OP_LOADBOOL, lua.OP_LOADNIL, lua.OP_GETUPVAL,
		lua.OP_GETGLOBAL, lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_NEWTABLE, lua.OP_SELF,
		lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW, lua.OP_UNM,
		lua.OP_NOT, lua.OP_LEN, lua.OP_CONCAT, lua.OP_TEST, lua.OP_TESTSET, lua.OP_CALL,
		lua.OP_TAILCALL, lua.OP_FORLOOP, lua.OP_FORPREP, lua.OP_CLOSURE, lua.OP_VARARG,
	} {
		s[op] = true
	}
	return s
}()

// gopher-lua raises these from the instructions glua leaves to it; reword
// turns them into Lua 5.1's.
const (
	gopherCall    = "attempt to call a non-function object"
	gopherIndex   = "attempt to index a non-table object("
	gopherCompare = "attempt to compare "
	gopherLen     = "__len undefined"
	gopherGetLoop = "too many recursions in gettable"
	gopherSetLoop = "too many recursions in settable"
)

// reword gives an error raised by one of gopher-lua's own instructions
// Lua 5.1's words, naming the value as Lua 5.1 does. It runs where the
// error was raised, before anything is unwound, and changes msg only when
// the current frame is a Lua function whose current instruction is one
// that raises it and the message is the one that instruction raises, with
// that instruction's position in front: an error a script raises itself
// with the same words comes from error, a Go function, and passes as it is.
func reword(L *lua.LState, cf unsafe.Pointer, msg lua.LValue) lua.LValue {
	s, ok := msg.(lua.LString)
	if !ok || !vmLayout.ok {
		return msg
	}
	if cf == nil {
		return msg
	}
	if frameFn(cf).IsG {
		if out := rewordArgError(L, cf, s); out != s {
			return out
		}
		return callerPosition(cf, s)
	}
	fn := frameFn(cf)
	pc := framePc(cf) - 1
	if pc < 0 || pc >= len(fn.Proto.Code) {
		return msg
	}
	prefix := position(fn, pc)
	text, ok := strings.CutPrefix(string(s), prefix)
	if !ok {
		return msg
	}
	i := fn.Proto.Code[pc]
	a, b, c := int(i>>18)&0xff, int(i&0x1ff), int(i>>9)&0x1ff
	regs := registers(registryOf(L))
	base := frameBase(cf)
	reg := func(r int) lua.LValue {
		if base+r < len(regs) {
			return regs[base+r]
		}
		return lua.LNil
	}
	var out string
	switch op := int(i >> 26); {
	case text == gopherCall && callable(L, reg(a)):
		return msg
	case text == gopherCall && (op == lua.OP_CALL || op == lua.OP_TAILCALL):
		out = typeErrorText(L, cf, reg(a), a, "call")
	case text == gopherCall && op == lua.OP_TFORLOOP:
		// Lua 5.1 calls a copy of the iterator, above the loop's registers,
		// which names nothing.
		out = "attempt to call a " + reg(a).Type().String() + " value"
	case strings.HasPrefix(text, gopherIndex):
		obj, event := -1, "__index"
		switch op {
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
			obj = b
		case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
			obj, event = a, "__newindex"
		case lua.OP_GETGLOBAL, lua.OP_SETGLOBAL:
			out = "attempt to index a " + strings.SplitN(text[len(gopherIndex):], ")", 2)[0] + " value"
		}
		if obj >= 0 {
			v := reg(obj)
			// The error is about the register's value only where gopher-lua
			// did not reach it through an __index or __newindex chain.
			if _, isTable := v.(*lua.LTable); isTable || L.GetMetaField(v, event) != lua.LNil {
				out = "attempt to index a " + strings.SplitN(text[len(gopherIndex):], ")", 2)[0] + " value"
			} else {
				out = typeErrorText(L, cf, v, obj, "index")
			}
		}
	case text == gopherGetLoop || text == gopherSetLoop:
		// luaV_gettable and luaV_settable give up after MAXTAGLOOP
		// __index or __newindex steps, as gopher-lua does, in other words.
		out = "loop in gettable"
		if text == gopherSetLoop {
			out = "loop in settable"
		}
	case op == lua.OP_LEN && text == gopherLen:
		out = typeErrorText(L, cf, reg(b), b, "get length of")
	case (op == lua.OP_LT || op == lua.OP_LE) && strings.HasPrefix(text, gopherCompare):
		x, y := rk(registryOf(L), cf, b), rk(registryOf(L), cf, c)
		out = orderErrorText(x, y)
		if text != "attempt to compare "+x.Type().String()+" with "+y.Type().String() &&
			text != "attempt to compare "+y.Type().String()+" with "+x.Type().String() {
			return msg
		}
	default:
		return msg
	}
	return lua.LString(prefix + out)
}

// orderErrorText is luaG_ordererror.
func orderErrorText(x, y lua.LValue) string {
	t1, t2 := x.Type().String(), y.Type().String()
	if t1 == t2 {
		return "attempt to compare two " + t1 + " values"
	}
	return "attempt to compare " + t1 + " with " + t2
}

// position is "source:line: ", as gopher-lua puts it before a message
// raised at instruction pc of fn.
func position(fn *lua.LFunction, pc int) string {
	if pc < len(fn.Proto.DbgSourcePositions) {
		return fmt.Sprintf("%s:%d: ", fn.Proto.SourceName, fn.Proto.DbgSourcePositions[pc])
	}
	return ""
}

// rewordArgError gives an argument error raised by a Go function, "bad
// argument #1 to sin (number expected, got string)", the name Lua 5.1's
// luaL_argerror gives it: the name the calling instruction used for the
// function, quoted, "?" where it used none, and for a method call
// (obj:f(x)) the arguments counted without the object, an error in the
// object itself reading "calling 'f' on bad self (...)".
func rewordArgError(L *lua.LState, cf unsafe.Pointer, s lua.LString) lua.LValue {
	caller := frameParent(cf)
	if caller == nil {
		return s
	}
	if frameFn(caller).IsG {
		// A Go function called by another (pcall(string.rep)): Lua 5.1
		// knows neither a position nor a name. gopher-lua put the position
		// of the nearest Lua function in front, this package's none.
		up := frameParent(caller)
		for up != nil && frameFn(up).IsG {
			up = frameParent(up)
		}
		text := string(s)
		if up != nil {
			text = strings.TrimPrefix(text, position(frameFn(up), framePc(up)-1))
		}
		n, extra, ok := parseArgError(text)
		if !ok {
			return s
		}
		return lua.LString(fmt.Sprintf("bad argument #%d to '?' (%s)", n, noValue(cf, n, extra)))
	}
	fn := frameFn(caller)
	pc := framePc(caller) - 1
	if pc < 0 || pc >= len(fn.Proto.Code) {
		return s
	}
	prefix := position(fn, pc)
	text, ok := strings.CutPrefix(string(s), prefix)
	if !ok {
		return s
	}
	n, extra, ok := parseArgError(text)
	if !ok {
		return s
	}
	extra = noValue(cf, n, extra)
	i := fn.Proto.Code[pc]
	kind, name := "", ""
	switch int(i >> 26) {
	case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_TFORLOOP:
		kind, name = objectName(fn.Proto, pc, int(i>>18)&0xff)
	}
	if kind == "" {
		name = "?"
	}
	if kind == "method" {
		n--
		if n == 0 {
			return lua.LString(fmt.Sprintf("%scalling '%s' on bad self (%s)", prefix, name, extra))
		}
	}
	return lua.LString(fmt.Sprintf("%sbad argument #%d to '%s' (%s)", prefix, n, name, extra))
}

// parseArgError reads "bad argument #n to name (extra)", the name bare as
// gopher-lua writes it or quoted as this package does.
func parseArgError(text string) (n int, extra string, ok bool) {
	text, ok = strings.CutPrefix(text, "bad argument #")
	if !ok {
		return 0, "", false
	}
	digits := 0
	for digits < len(text) && digits < 9 && text[digits] >= '0' && text[digits] <= '9' {
		n = n*10 + int(text[digits]-'0')
		digits++
	}
	rest, ok := strings.CutPrefix(text[digits:], " to ")
	if digits == 0 || !ok || !strings.HasSuffix(rest, ")") {
		return 0, "", false
	}
	end := " ("
	if strings.HasPrefix(rest, "'") {
		end = "' ("
	}
	cut := strings.Index(rest, end)
	if cut < 0 {
		return 0, "", false
	}
	return n, rest[cut+len(end) : len(rest)-1], true
}

// noValue words a missing argument as luaL_typerror does, "no value",
// where gopher-lua's checks say "nil".
func noValue(cf unsafe.Pointer, n int, extra string) string {
	if strings.HasSuffix(extra, " expected, got nil") && n > frameArgs(cf) {
		return strings.TrimSuffix(extra, "nil") + "no value"
	}
	return extra
}
