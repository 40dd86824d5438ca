package luac

import (
	"math"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/internal/lua51"
)

// expKind is what an expdesc holds, as Lua 5.1's expkind.
type expKind uint8

const (
	kVoid     expKind = iota // no value (an empty list)
	kNil                     //
	kTrue                    //
	kFalse                   //
	kK                       // info: constant index
	kKNum                    // nval: a number not yet in the constants
	kLocal                   // info: register of a local
	kUpval                   // info: upvalue index
	kGlobal                  // info: constant index of the name
	kIndexed                 // info: table register; aux: key as RK
	kJmp                     // info: pc of the jump of a comparison
	kReloc                   // info: pc of an instruction whose A is still free
	kNonReloc                // info: the register holding the value
	kCall                    // info: pc of OP_CALL
	kVararg                  // info: pc of OP_VARARG
)

type expdesc struct {
	k    expKind
	info int
	aux  int
	nval float64
	t, f int // jumps taken when the value is true / false
}

func (e *expdesc) init(k expKind, info int) {
	*e = expdesc{k: k, info: info, t: noJump, f: noJump}
}

func (e *expdesc) hasJumps() bool { return e.t != e.f }

func hasMultRet(k expKind) bool { return k == kCall || k == kVararg }

func (e *expdesc) isNumeral() bool { return e.k == kKNum && e.t == noJump && e.f == noJump }

func (fs *funcState) instOf(e *expdesc) *uint32 { return &fs.code[e.info] }

// --- discharging (lcode.c)

func (fs *funcState) setReturns(e *expdesc, nresults int) {
	switch e.k {
	case kCall:
		setC(fs.instOf(e), nresults+1)
	case kVararg:
		setB(fs.instOf(e), nresults+1)
		setA(fs.instOf(e), fs.freereg)
		fs.reserveRegs(1)
	}
}

func (fs *funcState) setOneRet(e *expdesc) {
	switch e.k {
	case kCall:
		e.k = kNonReloc
		e.info = argA(*fs.instOf(e))
	case kVararg:
		setB(fs.instOf(e), 2)
		e.k = kReloc
	}
}

func (fs *funcState) dischargeVars(e *expdesc) {
	switch e.k {
	case kLocal:
		e.k = kNonReloc
	case kUpval:
		e.info = fs.codeABC(lua.OP_GETUPVAL, 0, e.info, 0)
		e.k = kReloc
	case kGlobal:
		e.info = fs.codeABx(lua.OP_GETGLOBAL, 0, e.info)
		e.k = kReloc
	case kIndexed:
		fs.freeReg(e.aux)
		fs.freeReg(e.info)
		op := lua.OP_GETTABLE
		if fs.isStringK(e.aux) {
			op = lua.OP_GETTABLEKS
		}
		e.info = fs.codeABC(op, 0, e.info, e.aux)
		e.k = kReloc
	case kVararg, kCall:
		fs.setOneRet(e)
	}
}

// isStringK says an RK operand is a string constant, which the VM's
// OP_GETTABLEKS and OP_SETTABLEKS take without a type switch.
func (fs *funcState) isStringK(rk int) bool {
	if !isK(rk) {
		return false
	}
	_, ok := fs.consts[rk&^bitRK].(lua.LString)
	return ok
}

func (fs *funcState) freeExp(e *expdesc) {
	if e.k == kNonReloc {
		fs.freeReg(e.info)
	}
}

func (fs *funcState) discharge2reg(e *expdesc, reg int) {
	fs.dischargeVars(e)
	switch e.k {
	case kNil:
		fs.loadNil(reg, 1)
	case kFalse, kTrue:
		b := 0
		if e.k == kTrue {
			b = 1
		}
		fs.codeABC(lua.OP_LOADBOOL, reg, b, 0)
	case kK:
		fs.loadK(reg, e.info)
	case kKNum:
		fs.loadK(reg, fs.numberK(e.nval, false))
	case kReloc:
		if opcodeOf(*fs.instOf(e)) == lua.OP_VARARG && reg+1 < fs.freereg {
			// gopher-lua's OP_VARARG moves the stack top to just past
			// its values, clearing every register above: it may only
			// write where nothing live is above, so the value goes to a
			// free register and is moved from there.
			fs.checkStack(1)
			setA(fs.instOf(e), fs.freereg)
			fs.codeABC(lua.OP_MOVE, reg, fs.freereg, 0)
			break
		}
		setA(fs.instOf(e), reg)
	case kNonReloc:
		if reg != e.info {
			fs.codeABC(lua.OP_MOVE, reg, e.info, 0)
		}
	default: // kVoid or kJmp: nothing to do
		return
	}
	e.info = reg
	e.k = kNonReloc
}

func (fs *funcState) discharge2anyreg(e *expdesc) {
	if e.k != kNonReloc {
		fs.reserveRegs(1)
		fs.discharge2reg(e, fs.freereg-1)
	}
}

func (fs *funcState) codeLabel(a, b, jump int) int {
	fs.getLabel()
	return fs.codeABC(lua.OP_LOADBOOL, a, b, jump)
}

func (fs *funcState) exp2reg(e *expdesc, reg int) {
	fs.discharge2reg(e, reg)
	if e.k == kJmp {
		fs.concat(&e.t, e.info)
	}
	if e.hasJumps() {
		pf, pt := noJump, noJump
		if fs.needValue(e.t) || fs.needValue(e.f) {
			fj := noJump
			if e.k != kJmp {
				fj = fs.jump()
			}
			pf = fs.codeLabel(reg, 0, 1)
			pt = fs.codeLabel(reg, 1, 0)
			fs.patchToHere(fj)
		}
		final := fs.getLabel()
		fs.patchListAux(e.f, final, reg, pf)
		fs.patchListAux(e.t, final, reg, pt)
	}
	e.f, e.t = noJump, noJump
	e.info = reg
	e.k = kNonReloc
}

func (fs *funcState) exp2nextreg(e *expdesc) {
	fs.dischargeVars(e)
	fs.freeExp(e)
	fs.reserveRegs(1)
	fs.exp2reg(e, fs.freereg-1)
}

func (fs *funcState) exp2anyreg(e *expdesc) int {
	fs.dischargeVars(e)
	if e.k == kNonReloc {
		if !e.hasJumps() {
			return e.info
		}
		if e.info >= fs.nactvar {
			fs.exp2reg(e, e.info)
			return e.info
		}
	}
	fs.exp2nextreg(e)
	return e.info
}

func (fs *funcState) exp2val(e *expdesc) {
	if e.hasJumps() {
		fs.exp2anyreg(e)
	} else {
		fs.dischargeVars(e)
	}
}

func (fs *funcState) exp2RK(e *expdesc) int {
	fs.exp2val(e)
	switch e.k {
	case kKNum, kTrue, kFalse, kNil:
		if len(fs.consts) <= maxIndexRK {
			switch e.k {
			case kNil:
				e.info = fs.nilConst()
			case kKNum:
				e.info = fs.numberK(e.nval, false)
			default:
				e.info = fs.boolConst(e.k == kTrue)
			}
			e.k = kK
			return rkAsK(e.info)
		}
	case kK:
		if e.info <= maxIndexRK {
			return rkAsK(e.info)
		}
	}
	return fs.exp2anyreg(e)
}

func (fs *funcState) storeVar(v, ex *expdesc) {
	switch v.k {
	case kLocal:
		fs.freeExp(ex)
		fs.exp2reg(ex, v.info)
		return
	case kUpval:
		e := fs.exp2anyreg(ex)
		fs.codeABC(lua.OP_SETUPVAL, e, v.info, 0)
	case kGlobal:
		e := fs.exp2anyreg(ex)
		fs.codeABx(lua.OP_SETGLOBAL, e, v.info)
	case kIndexed:
		e := fs.exp2RK(ex)
		op := lua.OP_SETTABLE
		if fs.isStringK(v.aux) {
			op = lua.OP_SETTABLEKS
		}
		fs.codeABC(op, v.info, v.aux, e)
	default:
		fs.errorf("syntax error (cannot assign to this expression)")
	}
	fs.freeExp(ex)
}

func (fs *funcState) self(e, key *expdesc) {
	fs.exp2anyreg(e)
	fs.freeExp(e)
	fn := fs.freereg
	fs.reserveRegs(2)
	fs.codeABC(lua.OP_SELF, fn, e.info, fs.exp2RK(key))
	fs.freeExp(key)
	e.info = fn
	e.k = kNonReloc
}

func (fs *funcState) invertJump(e *expdesc) {
	i := fs.jumpControl(e.info)
	if argA(*i) == 0 {
		setA(i, 1)
	} else {
		setA(i, 0)
	}
}

func (fs *funcState) jumpOnCond(e *expdesc, cond int) int {
	if e.k == kReloc {
		ie := *fs.instOf(e)
		if opcodeOf(ie) == lua.OP_NOT {
			// Drop the OP_NOT and test its operand the other way round.
			fs.code = fs.code[:len(fs.code)-1]
			fs.lines = fs.lines[:len(fs.lines)-1]
			return fs.condJump(lua.OP_TEST, argB(ie), 0, 1-cond)
		}
	}
	constant := e.k == kK || e.k == kKNum || e.k == kTrue || e.k == kNil || e.k == kFalse
	fs.discharge2anyreg(e)
	fs.freeExp(e)
	j := fs.condJump(lua.OP_TESTSET, noReg, e.info, cond)
	if constant {
		// goIfTrue and goIfFalse test only constants of the jump's truth.
		if fs.constTests == nil {
			fs.constTests = map[int]bool{}
		}
		fs.constTests[j-1] = true
	}
	return j
}

// goIfTrue and goIfFalse are Lua 5.1's: a constant of the other truth is
// tested like any value. An unconditional jump there would take in the
// jumps pending to here, TESTSETs among them, whose values would then land
// in the wrong register.
func (fs *funcState) goIfTrue(e *expdesc) {
	var pc int
	fs.dischargeVars(e)
	switch e.k {
	case kK, kKNum, kTrue:
		pc = noJump
	case kJmp:
		fs.invertJump(e)
		pc = e.info
	default:
		pc = fs.jumpOnCond(e, 0)
	}
	fs.concat(&e.f, pc)
	fs.patchToHere(e.t)
	e.t = noJump
}

func (fs *funcState) goIfFalse(e *expdesc) {
	var pc int
	fs.dischargeVars(e)
	switch e.k {
	case kNil, kFalse:
		pc = noJump
	case kJmp:
		pc = e.info
	default:
		pc = fs.jumpOnCond(e, 1)
	}
	fs.concat(&e.t, pc)
	fs.patchToHere(e.f)
	e.f = noJump
}

func (fs *funcState) codeNot(e *expdesc) {
	fs.dischargeVars(e)
	switch e.k {
	case kNil, kFalse:
		e.k = kTrue
	case kK, kKNum, kTrue:
		e.k = kFalse
	case kJmp:
		fs.invertJump(e)
	case kReloc, kNonReloc:
		fs.discharge2anyreg(e)
		fs.freeExp(e)
		e.info = fs.codeABC(lua.OP_NOT, 0, e.info, 0)
		e.k = kReloc
	}
	e.f, e.t = e.t, e.f
	fs.removeValues(e.f)
	fs.removeValues(e.t)
}

func (fs *funcState) indexed(t, k *expdesc) {
	t.aux = fs.exp2RK(k)
	t.k = kIndexed
}

// constFolding folds arithmetic on numerals exactly where Lua 5.1 does,
// with the arithmetic the VM uses (lua51.Arith: Lua 5.1's % and C's pow),
// so a folded constant is the value the same operation gives at run time.
func constFolding(op int, e1, e2 *expdesc) bool {
	if !e1.isNumeral() || !e2.isNumeral() {
		return false
	}
	v1, v2 := e1.nval, e2.nval
	var r float64
	switch op {
	case lua.OP_ADD:
		r = v1 + v2
	case lua.OP_SUB:
		r = v1 - v2
	case lua.OP_MUL:
		r = v1 * v2
	case lua.OP_DIV:
		if v2 == 0 {
			return false
		}
		r = v1 / v2
	case lua.OP_MOD:
		if v2 == 0 {
			return false
		}
		r = lua51.Arith(op, v1, v2)
	case lua.OP_POW:
		r = lua51.Arith(op, v1, v2)
	case lua.OP_UNM:
		r = -v1
	default:
		return false
	}
	if math.IsNaN(r) {
		return false
	}
	e1.nval = r
	return true
}

func (fs *funcState) codeArith(op int, e1, e2 *expdesc) {
	if constFolding(op, e1, e2) {
		return
	}
	o2 := 0
	if op != lua.OP_UNM && op != lua.OP_LEN {
		o2 = fs.exp2RK(e2)
	}
	o1 := fs.exp2RK(e1)
	if o1 > o2 {
		fs.freeExp(e1)
		fs.freeExp(e2)
	} else {
		fs.freeExp(e2)
		fs.freeExp(e1)
	}
	e1.info = fs.codeABC(op, 0, o1, o2)
	e1.k = kReloc
}

func (fs *funcState) codeComp(op, cond int, e1, e2 *expdesc) {
	o1 := fs.exp2RK(e1)
	o2 := fs.exp2RK(e2)
	fs.freeExp(e2)
	fs.freeExp(e1)
	if cond == 0 && op != lua.OP_EQ {
		o1, o2 = o2, o1
		cond = 1
	}
	e1.info = fs.condJump(op, cond, o1, o2)
	e1.k = kJmp
}

// --- expressions (lparser.c)

func (fs *funcState) expr(node ast.Expr, v *expdesc) {
	// Each instruction is attributed to the line of the last node compiled
	// before it, as Lua 5.1 attributes it to the last token read.
	if l := node.Line(); l > 0 {
		fs.line = l
	}
	switch ex := node.(type) {
	case *ast.NilExpr:
		v.init(kNil, 0)
	case *ast.TrueExpr:
		v.init(kTrue, 0)
	case *ast.FalseExpr:
		v.init(kFalse, 0)
	case *ast.NumberExpr:
		n, ok := parseNumber(ex.Value)
		if !ok {
			fs.line = ex.Line()
			fs.errorf("malformed number near '%s'", ex.Value)
		}
		v.init(kKNum, 0)
		v.nval = n
	case *ast.StringExpr:
		v.init(kK, fs.stringK(ex.Value, false))
	case *ast.Comma3Expr:
		if fs.f.IsVarArg&lua.VarArgIsVarArg == 0 {
			fs.errorf("cannot use '...' outside a vararg function")
		}
		fs.f.IsVarArg &^= lua.VarArgNeedsArg
		v.init(kVararg, fs.codeABC(lua.OP_VARARG, 0, 1, 0))
		if ex.AdjustRet {
			fs.dischargeVars(v)
		}
	case *ast.TableExpr:
		fs.constructor(ex, v)
	case *ast.FunctionExpr:
		fs.body(ex, false, v)
		fs.line = max(fs.line, ex.LastLine())
	case *ast.IdentExpr:
		fs.singleVar(ex.Value, v)
	case *ast.AttrGetExpr:
		fs.expr(ex.Object, v)
		fs.exp2anyreg(v)
		var key expdesc
		fs.expr(ex.Key, &key)
		fs.exp2val(&key)
		fs.indexed(v, &key)
	case *ast.FuncCallExpr:
		fs.callExpr(ex, v)
	case *ast.LogicalOpExpr:
		fs.expr(ex.Lhs, v)
		fs.nearAt(ex.Rhs, first)
		and := ex.Operator == "and"
		if and {
			fs.goIfTrue(v)
		} else {
			fs.goIfFalse(v)
		}
		var v2 expdesc
		fs.expr(ex.Rhs, &v2)
		fs.dischargeVars(&v2)
		if and {
			fs.concat(&v2.f, v.f)
		} else {
			fs.concat(&v2.t, v.t)
		}
		*v = v2
	case *ast.RelationalOpExpr:
		fs.expr(ex.Lhs, v)
		fs.nearAt(ex.Rhs, first)
		fs.exp2RK(v)
		var v2 expdesc
		fs.expr(ex.Rhs, &v2)
		switch ex.Operator {
		case "==":
			fs.codeComp(lua.OP_EQ, 1, v, &v2)
		case "~=":
			fs.codeComp(lua.OP_EQ, 0, v, &v2)
		case "<":
			fs.codeComp(lua.OP_LT, 1, v, &v2)
		case "<=":
			fs.codeComp(lua.OP_LE, 1, v, &v2)
		case ">":
			fs.codeComp(lua.OP_LT, 0, v, &v2)
		case ">=":
			fs.codeComp(lua.OP_LE, 0, v, &v2)
		default:
			fs.errorf("unknown operator %s", ex.Operator)
		}
	case *ast.StringConcatOpExpr:
		fs.expr(ex.Lhs, v)
		fs.nearAt(ex.Rhs, first)
		fs.exp2nextreg(v)
		var v2 expdesc
		fs.expr(ex.Rhs, &v2)
		fs.exp2val(&v2)
		if v2.k == kReloc && opcodeOf(*fs.instOf(&v2)) == lua.OP_CONCAT {
			fs.freeExp(v)
			setB(fs.instOf(&v2), v.info)
			v.k = kReloc
			v.info = v2.info
		} else {
			fs.exp2nextreg(&v2)
			fs.codeArith(lua.OP_CONCAT, v, &v2)
		}
	case *ast.ArithmeticOpExpr:
		op := arithOps[ex.Operator]
		fs.expr(ex.Lhs, v)
		fs.nearAt(ex.Rhs, first)
		if !v.isNumeral() {
			fs.exp2RK(v)
		}
		var v2 expdesc
		fs.expr(ex.Rhs, &v2)
		fs.codeArith(op, v, &v2)
	case *ast.UnaryMinusOpExpr:
		fs.expr(ex.Expr, v)
		if !v.isNumeral() {
			fs.exp2anyreg(v)
		}
		e2 := expdesc{k: kKNum, t: noJump, f: noJump}
		fs.codeArith(lua.OP_UNM, v, &e2)
	case *ast.UnaryNotOpExpr:
		fs.expr(ex.Expr, v)
		fs.codeNot(v)
	case *ast.UnaryLenOpExpr:
		fs.expr(ex.Expr, v)
		fs.exp2anyreg(v)
		e2 := expdesc{k: kKNum, t: noJump, f: noJump}
		fs.codeArith(lua.OP_LEN, v, &e2)
	default:
		fs.errorf("cannot compile %T", node)
	}
	fs.nearAt(node, after)
}

var arithOps = map[string]int{
	"+": lua.OP_ADD, "-": lua.OP_SUB, "*": lua.OP_MUL, "/": lua.OP_DIV, "%": lua.OP_MOD, "^": lua.OP_POW,
}

// singleVar resolves a name to a local, an upvalue or a global.
func (fs *funcState) singleVar(name string, v *expdesc) {
	if fs.singleVarAux(name, v, true) == kGlobal {
		v.info = fs.stringK(name, true)
	}
}

func (fs *funcState) singleVarAux(name string, v *expdesc, base bool) expKind {
	if fs == nil {
		v.init(kGlobal, noReg)
		return kGlobal
	}
	if reg := fs.searchVar(name); reg >= 0 {
		v.init(kLocal, reg)
		if !base {
			fs.markUpval(reg)
		}
		return kLocal
	}
	if fs.prev.singleVarAux(name, v, false) == kGlobal {
		return kGlobal
	}
	v.info = fs.indexUpvalue(name, v)
	v.k = kUpval
	return kUpval
}

func (fs *funcState) searchVar(name string) int {
	for i := fs.nactvar - 1; i >= 0; i-- {
		if fs.f.DbgLocals[fs.actvar[i]].Name == name {
			return i
		}
	}
	return -1
}

func (fs *funcState) markUpval(level int) {
	bl := fs.bl
	for bl != nil && bl.nactvar > level {
		bl = bl.prev
	}
	if bl != nil {
		bl.upval = true
	}
}

func (fs *funcState) indexUpvalue(name string, v *expdesc) int {
	local := v.k == kLocal
	for i, u := range fs.ups {
		if u.local == local && u.info == v.info {
			return i
		}
	}
	if len(fs.ups)+1 > maxUpvalues {
		fs.errorLimit(maxUpvalues, "upvalues")
	}
	fs.ups = append(fs.ups, upvalDesc{local: local, info: v.info})
	fs.upnames = append(fs.upnames, name)
	return len(fs.ups) - 1
}

// callExpr compiles a call; its value is left open (kCall) for the
// consumer to say how many results it takes.
func (fs *funcState) callExpr(ex *ast.FuncCallExpr, v *expdesc) {
	// name is the call's name for gopher-lua's messages; named is how
	// Lua 5.1's getobjname reads the call back from the code, for
	// debug.getinfo: a field or method whose key is no string constant
	// in an RK operand (past 256 constants it is in a register) is "?".
	name := "?"
	var named lua51.CallName
	if ex.Receiver != nil {
		fs.expr(ex.Receiver, v)
		var key expdesc
		key.init(kK, fs.stringK(ex.Method, false))
		fs.line = ex.Line()
		fs.nearAt(ex, open)
		fs.self(v, &key)
		name, named = ex.Method, lua51.CallName{Name: "?", What: "method"}
		if isK(argC(fs.code[len(fs.code)-1])) {
			named.Name = ex.Method
		}
	} else {
		fs.expr(ex.Func, v)
		fs.nearAt(ex, open)
		switch fn := ex.Func.(type) {
		case *ast.IdentExpr:
			name = fn.Value
		case *ast.AttrGetExpr:
			if k, ok := fn.Key.(*ast.StringExpr); ok {
				name = k.Value
			}
		}
		switch v.k {
		case kLocal:
			named = lua51.CallName{Name: name, What: "local"}
		case kUpval:
			named = lua51.CallName{Name: name, What: "upvalue"}
		case kGlobal:
			named = lua51.CallName{Name: name, What: "global"}
		case kIndexed:
			named = lua51.CallName{Name: "?", What: "field"}
			if fs.isStringK(v.aux) {
				named.Name = string(fs.consts[v.aux&^bitRK].(lua.LString))
			}
		}
		fs.exp2nextreg(v)
	}
	base := v.info
	var args expdesc
	args.init(kVoid, 0)
	if len(ex.Args) > 0 {
		fs.exprList(ex.Args, &args)
		fs.setReturns(&args, multRet)
	}
	var nparams int
	if hasMultRet(args.k) {
		nparams = multRet
	} else {
		if args.k != kVoid {
			fs.nearAt(ex, after)
			fs.exp2nextreg(&args)
		}
		nparams = fs.freereg - (base + 1)
	}
	fs.line = ex.Line()
	v.init(kCall, fs.codeABC(lua.OP_CALL, base, nparams+1, 2))
	fs.f.DbgCalls = append(fs.f.DbgCalls, lua.DbgCall{Name: name, Pc: v.info})
	if named.What != "" {
		if fs.callNames == nil {
			fs.callNames = map[int]lua51.CallName{}
			recordCallNames(fs.f, fs.callNames)
		}
		fs.callNames[v.info] = named
	}
	fs.freereg = base + 1
	if ex.AdjustRet {
		fs.dischargeVars(v)
	}
}

// exprList compiles a list, leaving every value but the last in the next
// registers and the last in v; it returns the count.
func (fs *funcState) exprList(list []ast.Expr, v *expdesc) int {
	for i, e := range list {
		if i > 0 {
			fs.nearAt(e, first)
			fs.exp2nextreg(v)
		}
		fs.expr(e, v)
	}
	return len(list)
}

// constructor compiles a table constructor: list items are stored by
// OP_SETLIST in batches of lua.FieldsPerFlush (a batch number past the C
// field goes in the word after the instruction), keyed items one by one.
func (fs *funcState) constructor(ex *ast.TableExpr, t *expdesc) {
	fs.line = ex.Line()
	pc := fs.codeABC(lua.OP_NEWTABLE, 0, 0, 0)
	t.init(kReloc, pc)
	fs.nearAt(ex, first)
	fs.exp2nextreg(t)
	var v expdesc
	v.init(kVoid, 0)
	na, nh, tostore := 0, 0, 0
	flush := lua.FieldsPerFlush
	var last *ast.Field // the item v holds
	for _, field := range ex.Fields {
		// closelistfield, on the line of the separator after the item
		if v.k != kVoid {
			if line, ok := fs.facts.fieldEnds[last]; ok {
				fs.line = line
			}
			fs.nearAt(field.Value, fieldStart)
			fs.exp2nextreg(&v)
			v.k = kVoid
			if tostore == flush {
				fs.setList(t.info, na, tostore)
				tostore = 0
			}
		}
		if field.Key != nil {
			nh++
			reg := fs.freereg
			var key, val expdesc
			fs.expr(field.Key, &key)
			fs.exp2val(&key)
			fs.nearAt(field.Value, first)
			rkkey := fs.exp2RK(&key)
			fs.expr(field.Value, &val)
			op := lua.OP_SETTABLE
			if fs.isStringK(rkkey) {
				op = lua.OP_SETTABLEKS
			}
			fs.codeABC(op, t.info, rkkey, fs.exp2RK(&val))
			fs.freereg = reg
			continue
		}
		fs.expr(field.Value, &v)
		last = field
		na++
		tostore++
	}
	// lastlistfield, on the line of the '}'
	if tostore > 0 {
		if line, ok := fs.facts.closeLines[ex]; ok {
			fs.line = line
		}
		if hasMultRet(v.k) {
			fs.setReturns(&v, multRet)
			fs.setList(t.info, na, multRet)
			na--
		} else {
			if v.k != kVoid {
				fs.nearAt(ex, after)
				fs.exp2nextreg(&v)
			}
			fs.setList(t.info, na, tostore)
		}
	}
	// The VM takes B and C as the sizes to preallocate, not Lua 5.1's
	// floating-point byte.
	setB(&fs.code[pc], min(na, maxArgC))
	setC(&fs.code[pc], min(nh, maxArgC))
}

func (fs *funcState) setList(base, nelems, tostore int) {
	c := (nelems-1)/lua.FieldsPerFlush + 1
	b := tostore
	if tostore == multRet {
		b = 0
	}
	if c <= maxArgC {
		fs.codeABC(lua.OP_SETLIST, base, b, c)
	} else {
		fs.codeABC(lua.OP_SETLIST, base, b, 0)
		fs.codeInst(uint32(c))
	}
	fs.freereg = base + 1
}

// body compiles a function literal into a new prototype and leaves the
// closure in v.
func (fs *funcState) body(ex *ast.FunctionExpr, needSelf bool, v *expdesc) {
	nfs := openFunc(fs, fs.source)
	nfs.f.LineDefined = ex.Line()
	nfs.f.LastLineDefined = ex.LastLine()
	nfs.line = ex.Line()
	nparams := 0
	if needSelf {
		nfs.newLocalVar("self", nparams)
		nparams++
	}
	for _, name := range ex.ParList.Names {
		nfs.newLocalVar(name, nparams)
		nparams++
	}
	if ex.ParList.HasVargs {
		if lua.CompatVarArg {
			nfs.newLocalVar("arg", nparams)
			nparams++
			nfs.hasArg = true
			nfs.f.IsVarArg = lua.VarArgHasArg | lua.VarArgNeedsArg
		}
		nfs.f.IsVarArg |= lua.VarArgIsVarArg
	}
	nfs.adjustLocalVars(nparams)
	np := nfs.nactvar
	if nfs.hasArg {
		np--
	}
	nfs.f.NumParameters = uint8(np)
	nfs.reserveRegs(nfs.nactvar)
	// The body is the function's own scope, not a block of it, as in Lua
	// 5.1: no OP_CLOSE ends it, since its return closes the upvalues.
	nfs.chunk(ex.Stmts)
	nfs.line = ex.LastLine()
	nfs.nearAt(ex, after)
	nfs.closeFunc()
	fs.protos = append(fs.protos, nfs.f)
	// Lua 5.1 codes the closure once its body's end is read: OP_CLOSURE
	// and the upvalue words after it lie on the line of that end, which a
	// line hook reports.
	fs.line = ex.LastLine()
	v.init(kReloc, fs.codeABx(lua.OP_CLOSURE, 0, len(fs.protos)-1))
	for _, u := range nfs.ups {
		op := lua.OP_GETUPVAL
		if u.local {
			op = lua.OP_MOVE
		}
		fs.codeABC(op, 0, u.info, 0)
	}
}
