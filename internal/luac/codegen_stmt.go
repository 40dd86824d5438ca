package luac

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// --- locals and blocks (lparser.c)

func (fs *funcState) newLocalVar(name string, n int) {
	if fs.nactvar+n+1 > maxVars {
		fs.errorLimit(maxVars, "local variables")
	}
	fs.f.DbgLocals = append(fs.f.DbgLocals, &lua.DbgLocalInfo{Name: name})
	idx := len(fs.f.DbgLocals) - 1
	if need := fs.nactvar + n + 1; len(fs.actvar) < need {
		fs.actvar = append(fs.actvar, make([]int, need-len(fs.actvar))...)
	}
	fs.actvar[fs.nactvar+n] = idx
}

func (fs *funcState) adjustLocalVars(nvars int) {
	fs.nactvar += nvars
	for ; nvars > 0; nvars-- {
		fs.f.DbgLocals[fs.actvar[fs.nactvar-nvars]].StartPc = fs.pc()
	}
}

func (fs *funcState) removeVars(tolevel int) {
	for fs.nactvar > tolevel {
		fs.nactvar--
		fs.f.DbgLocals[fs.actvar[fs.nactvar]].EndPc = fs.pc()
	}
}

func (fs *funcState) enterBlock(bl *blockCnt, breakable bool) {
	*bl = blockCnt{prev: fs.bl, breaklist: noJump, nactvar: fs.nactvar, breakable: breakable}
	fs.bl = bl
}

func (fs *funcState) leaveBlock() {
	bl := fs.bl
	fs.bl = bl.prev
	fs.removeVars(bl.nactvar)
	if bl.upval {
		fs.codeABC(lua.OP_CLOSE, bl.nactvar, 0, 0)
	}
	fs.freereg = fs.nactvar
	fs.patchToHere(bl.breaklist)
}

// block compiles stmts in a block of their own.
func (fs *funcState) block(stmts []ast.Stmt, breakable bool) {
	var bl blockCnt
	fs.enterBlock(&bl, breakable)
	fs.chunk(stmts)
	fs.leaveBlock()
}

// bodyOf compiles the block that statement st closes (a loop's body, an
// if's then part) and leaves the code generator on the line Lua 5.1's
// parser is on at its end: the block's OP_CLOSE and the jump that follows
// lie there.
func (fs *funcState) bodyOf(st ast.Stmt, stmts []ast.Stmt) {
	var bl blockCnt
	fs.enterBlock(&bl, false)
	fs.chunk(stmts)
	if line, ok := fs.facts.bodyEnds[st]; ok {
		fs.line = line
	}
	fs.leaveBlock()
}

func (fs *funcState) chunk(stmts []ast.Stmt) {
	for _, st := range stmts {
		fs.line = st.Line()
		fs.nearAt(st, first)
		fs.statement(st)
		fs.freereg = fs.nactvar
	}
}

func (fs *funcState) statement(node ast.Stmt) {
	switch st := node.(type) {
	case *ast.AssignStmt:
		fs.assignStmt(st)
	case *ast.LocalAssignStmt:
		if len(st.Names) == 1 && len(st.Exprs) == 1 {
			if fn, ok := st.Exprs[0].(*ast.FunctionExpr); ok && fs.facts.localFunctions[st] {
				fs.localFunc(st.Names[0], fn)
				return
			}
		}
		fs.localStmt(st)
	case *ast.FuncCallStmt:
		var v expdesc
		fs.expr(st.Expr, &v)
		if v.k == kCall {
			setC(fs.instOf(&v), 1) // a call statement takes no results
		}
	case *ast.DoBlockStmt:
		fs.block(st.Stmts, false)
	case *ast.WhileStmt:
		fs.whileStmt(st)
	case *ast.RepeatStmt:
		fs.repeatStmt(st)
	case *ast.IfStmt:
		fs.ifStmt(st)
	case *ast.NumberForStmt:
		fs.forNum(st)
	case *ast.GenericForStmt:
		fs.forList(st)
	case *ast.FuncDefStmt:
		fs.funcStmt(st)
	case *ast.ReturnStmt:
		fs.retStmt(st)
	case *ast.BreakStmt:
		fs.breakStmt()
	default:
		fs.errorf("cannot compile %T", node)
	}
}

// adjustAssign makes nexps values, the last in e, fill nvars registers.
func (fs *funcState) adjustAssign(nvars, nexps int, e *expdesc) {
	extra := nvars - nexps
	if hasMultRet(e.k) {
		extra++ // the call itself
		if extra < 0 {
			extra = 0
		}
		fs.setReturns(e, extra)
		if extra > 1 {
			fs.reserveRegs(extra - 1)
		}
		return
	}
	if e.k != kVoid {
		fs.exp2nextreg(e)
	}
	if extra > 0 {
		reg := fs.freereg
		fs.reserveRegs(extra)
		fs.loadNil(reg, extra)
	}
}

func (fs *funcState) localStmt(st *ast.LocalAssignStmt) {
	for i, name := range st.Names {
		fs.newLocalVar(name, i)
	}
	var e expdesc
	nexps := 0
	if len(st.Exprs) > 0 {
		nexps = fs.exprList(st.Exprs, &e)
	} else {
		e.init(kVoid, 0)
		fs.nearAt(st, after)
	}
	fs.adjustAssign(len(st.Names), nexps, &e)
	fs.adjustLocalVars(len(st.Names))
}

func (fs *funcState) localFunc(name string, fn *ast.FunctionExpr) {
	fs.newLocalVar(name, 0)
	var v, b expdesc
	v.init(kLocal, fs.freereg)
	fs.reserveRegs(1)
	fs.adjustLocalVars(1)
	fs.body(fn, false, &b)
	fs.storeVar(&v, &b)
	// Debug information sees the variable only after its assignment.
	fs.f.DbgLocals[fs.actvar[fs.nactvar-1]].StartPc = fs.pc()
}

// assignStmt follows Lua 5.1's restassign: every target's table and key is
// evaluated first, left to right, then the values; the stores happen right
// to left, each from its own register.
func (fs *funcState) assignStmt(st *ast.AssignStmt) {
	lhs := make([]expdesc, len(st.Lhs))
	for i, target := range st.Lhs {
		fs.expr(target, &lhs[i])
		if lhs[i].k < kLocal || lhs[i].k > kIndexed {
			fs.errorf("syntax error (cannot assign to this expression)")
		}
		if i > 0 && lhs[i].k == kLocal {
			fs.checkConflict(lhs[:i], &lhs[i])
		}
	}
	nvars := len(lhs)
	var e expdesc
	nexps := fs.exprList(st.Rhs, &e)
	next := nvars - 1
	if nexps != nvars {
		fs.adjustAssign(nvars, nexps, &e)
		if nexps > nvars {
			fs.freereg -= nexps - nvars // drop the extra values
		}
	} else {
		fs.setOneRet(&e)
		fs.storeVar(&lhs[next], &e)
		next--
	}
	for ; next >= 0; next-- {
		e.init(kNonReloc, fs.freereg-1)
		fs.storeVar(&lhs[next], &e)
	}
}

// checkConflict copies local v to a fresh register where an earlier target
// of the same statement uses it as its table or key, so that storing into
// v first cannot change where those stores go.
func (fs *funcState) checkConflict(prev []expdesc, v *expdesc) {
	extra := fs.freereg
	conflict := false
	for i := range prev {
		lh := &prev[i]
		if lh.k == kIndexed {
			if lh.info == v.info {
				conflict = true
				lh.info = extra
			}
			if lh.aux == v.info {
				conflict = true
				lh.aux = extra
			}
		}
	}
	if conflict {
		fs.codeABC(lua.OP_MOVE, fs.freereg, v.info, 0)
		fs.reserveRegs(1)
	}
}

// cond compiles a loop or if condition and returns its false-exit list.
func (fs *funcState) cond(e ast.Expr) int {
	var v expdesc
	fs.expr(e, &v)
	if v.k == kNil {
		v.k = kFalse
	}
	fs.goIfTrue(&v)
	return v.f
}

func (fs *funcState) whileStmt(st *ast.WhileStmt) {
	whileInit := fs.getLabel()
	condExit := fs.cond(st.Condition)
	var bl blockCnt
	fs.enterBlock(&bl, true)
	fs.bodyOf(st, st.Stmts)
	fs.nearAt(st, loopEnd)
	fs.patchList(fs.jump(), whileInit)
	fs.leaveBlock()
	fs.patchToHere(condExit)
}

func (fs *funcState) repeatStmt(st *ast.RepeatStmt) {
	repeatInit := fs.getLabel()
	var bl1, bl2 blockCnt
	fs.enterBlock(&bl1, true)
	fs.enterBlock(&bl2, false)
	fs.chunk(st.Stmts)
	fs.line = st.Condition.Line()
	condExit := fs.cond(st.Condition)
	if !bl2.upval {
		fs.leaveBlock()
		fs.patchList(condExit, repeatInit)
	} else {
		// The loop's locals are upvalues: close them on the way out too.
		fs.breakStmt()
		fs.patchToHere(condExit)
		fs.leaveBlock()
		fs.patchList(fs.jump(), repeatInit)
	}
	fs.leaveBlock()
}

func (fs *funcState) ifStmt(st *ast.IfStmt) {
	escapeList := noJump
	flist := fs.cond(st.Condition)
	fs.bodyOf(st, st.Then)
	if len(st.Else) > 0 {
		fs.concat(&escapeList, fs.jump())
		fs.patchToHere(flist)
		fs.block(st.Else, false)
	} else {
		fs.concat(&escapeList, flist)
	}
	fs.patchToHere(escapeList)
}

func (fs *funcState) exp1(e ast.Expr) {
	var v expdesc
	fs.expr(e, &v)
	fs.exp2nextreg(&v)
}

func (fs *funcState) forBody(loop ast.Stmt, base, line, nvars int, isNum bool, stmts []ast.Stmt) {
	fs.adjustLocalVars(3) // the loop's control registers
	var prep int
	if isNum {
		prep = fs.codeAsBx(lua.OP_FORPREP, base, noJump)
	} else {
		prep = fs.jump()
	}
	var bl blockCnt
	fs.enterBlock(&bl, false)
	fs.adjustLocalVars(nvars)
	fs.reserveRegs(nvars)
	fs.bodyOf(loop, stmts)
	fs.leaveBlock()
	fs.nearAt(loop, loopEnd)
	fs.patchToHere(prep)
	var endFor int
	if isNum {
		endFor = fs.codeAsBx(lua.OP_FORLOOP, base, noJump)
	} else {
		endFor = fs.codeABC(lua.OP_TFORLOOP, base, 0, nvars)
	}
	fs.fixLine(line)
	if !isNum {
		endFor = fs.jump() // on the body's last line, as Lua 5.1's
	}
	fs.patchList(endFor, prep+1)
}

// forLocals declares a loop's three control registers, under the names
// Lua 5.1 gives them, and its variables.
func (fs *funcState) forLocals(control [3]string, names ...string) {
	for i, name := range control {
		fs.newLocalVar(name, i)
	}
	for i, name := range names {
		fs.newLocalVar(name, 3+i)
	}
}

func (fs *funcState) forNum(st *ast.NumberForStmt) {
	var bl blockCnt
	fs.enterBlock(&bl, true)
	base := fs.freereg
	fs.forLocals([3]string{"(for index)", "(for limit)", "(for step)"}, st.Name)
	fs.exp1(st.Init)
	fs.exp1(st.Limit)
	if st.Step != nil {
		fs.exp1(st.Step)
	} else {
		fs.loadK(fs.freereg, fs.numberK(1, false))
		fs.reserveRegs(1)
	}
	fs.forBody(st, base, st.Line(), 1, true, st.Stmts)
	fs.leaveBlock()
}

func (fs *funcState) forList(st *ast.GenericForStmt) {
	var bl blockCnt
	fs.enterBlock(&bl, true)
	base := fs.freereg
	fs.forLocals([3]string{"(for generator)", "(for state)", "(for control)"}, st.Names...)
	var e expdesc
	nexps := fs.exprList(st.Exprs, &e)
	fs.adjustAssign(3, nexps, &e)
	fs.checkStack(3) // room to call the generator
	// Lua 5.1 gives the loop's call the line the expressions after `in`
	// start on (forlist's ls->linenumber), where an error in it is reported.
	line := st.Line()
	if len(st.Exprs) > 0 && st.Exprs[0].Line() > 0 {
		line = st.Exprs[0].Line()
	}
	fs.forBody(st, base, line, len(st.Names), false, st.Stmts)
	fs.leaveBlock()
}

func (fs *funcState) funcStmt(st *ast.FuncDefStmt) {
	var v, b expdesc
	needSelf := false
	if st.Name.Func == nil {
		fs.expr(st.Name.Receiver, &v)
		fs.exp2anyreg(&v)
		var key expdesc
		key.init(kK, fs.stringK(st.Name.Method, false))
		fs.indexed(&v, &key)
		needSelf = true
	} else {
		fs.expr(st.Name.Func, &v)
	}
	fs.body(st.Func, needSelf, &b)
	fs.line = st.Line()
	fs.storeVar(&v, &b)
	fs.fixLine(st.Line()) // the definition happens on its first line
}

func (fs *funcState) retStmt(st *ast.ReturnStmt) {
	var first, nret int
	if len(st.Exprs) == 0 {
		first, nret = 0, 0
	} else {
		var e expdesc
		nret = fs.exprList(st.Exprs, &e)
		if hasMultRet(e.k) {
			fs.setReturns(&e, multRet)
			if e.k == kCall && nret == 1 {
				setOp(fs.instOf(&e), lua.OP_TAILCALL)
			}
			first = fs.nactvar
			nret = multRet
		} else if nret == 1 {
			first = fs.exp2anyreg(&e)
		} else {
			fs.exp2nextreg(&e)
			first = fs.nactvar
		}
	}
	fs.line = st.Line()
	fs.ret(first, nret)
}

func (fs *funcState) breakStmt() {
	bl := fs.bl
	upval := false
	for bl != nil && !bl.breakable {
		upval = upval || bl.upval
		bl = bl.prev
	}
	if bl == nil {
		fs.errorf("no loop to break")
	}
	if upval {
		fs.codeABC(lua.OP_CLOSE, bl.nactvar, 0, 0)
	}
	fs.concat(&bl.breaklist, fs.jump())
}
