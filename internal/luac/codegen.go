package luac

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/internal/lua51"
)

// This file and codegen_expr.go, codegen_stmt.go compile gopher-lua's
// syntax trees to the prototypes its VM runs, following Lua 5.1's lcode.c
// and lparser.c: an expression is an expdesc that stays undischarged until
// its consumer says where the value goes, conditional jumps collect in
// lists that are patched once to their final targets, and registers are
// taken and freed in stack order (freereg). The instruction set and its
// encoding are gopher-lua's (Lua 5.1's, with 8-bit A and 9-bit B and C);
// what each opcode does is read from gopher-lua's vm.go.

// Instruction encoding, as gopher-lua's opcode.go lays it out.
const (
	opSHIFTA   = 18
	opSHIFTC   = 9
	opMaskA    = 0xff
	opMaskB    = 0x1ff
	opMaskBx   = 0x3ffff
	maxArgBx   = opMaskBx
	maxArgSBx  = maxArgBx >> 1
	maxArgC    = opMaskB
	bitRK      = 256
	maxIndexRK = bitRK - 1

	noJump = -1
	noReg  = opMaskA // a TESTSET whose target is still open
	// multRet asks a call or `...` for all its values.
	multRet = -1

	// Lua 5.1's limits (luaconf.h, llimits.h).
	maxStack      = 250
	maxVars       = 200
	maxUpvalues   = 60
	maxConstIndex = maxArgBx
)

func opcodeOf(i uint32) int { return int(i >> 26) }
func argA(i uint32) int     { return int(i>>opSHIFTA) & opMaskA }
func argB(i uint32) int     { return int(i) & opMaskB }
func argC(i uint32) int     { return int(i>>opSHIFTC) & opMaskB }
func argSBx(i uint32) int   { return int(i&opMaskBx) - maxArgSBx }

func setA(i *uint32, a int)   { *i = *i&^(opMaskA<<opSHIFTA) | uint32(a&opMaskA)<<opSHIFTA }
func setB(i *uint32, b int)   { *i = *i&^opMaskB | uint32(b&opMaskB) }
func setC(i *uint32, c int)   { *i = *i&^(opMaskB<<opSHIFTC) | uint32(c&opMaskB)<<opSHIFTC }
func setSBx(i *uint32, s int) { *i = *i&^opMaskBx | uint32((s+maxArgSBx)&opMaskBx) }
func setOp(i *uint32, op int) { *i = *i&0x3ffffff | uint32(op)<<26 }
func isK(rk int) bool         { return rk&bitRK != 0 }
func rkAsK(index int) int     { return index | bitRK }
func makeABC(op, a, b, c int) uint32 {
	return uint32(op)<<26 | uint32(a&opMaskA)<<opSHIFTA | uint32(c&opMaskB)<<opSHIFTC | uint32(b&opMaskB)
}
func makeABx(op, a, bx int) uint32 {
	return uint32(op)<<26 | uint32(a&opMaskA)<<opSHIFTA | uint32(bx&opMaskBx)
}

// testMode says the opcode is a test followed by the jump it skips.
func testMode(op int) bool {
	switch op {
	case lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_TESTSET, lua.OP_TFORLOOP:
		return true
	}
	return false
}

// compileError is raised (panicked) inside the compiler and returned by
// compileChunk as a *CompileError; nothing else is recovered there.
type compileError struct {
	line int
	msg  string
}

// CompileError is a program the compiler rejects (a limit passed, a break
// outside a loop). Load returns it as the Cause
// of a syntax *lua.ApiError.
type CompileError struct {
	Chunk   string
	Line    int
	Message string
}

// Error is the message as lua5.1 words it: the chunk as ChunkID shows it,
// the line, and the message.
func (e *CompileError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Chunk, e.Line, e.Message)
}

type upvalDesc struct {
	local bool // a local of the enclosing function (else one of its upvalues)
	info  int
}

type blockCnt struct {
	prev      *blockCnt
	breaklist int
	nactvar   int
	upval     bool // some local of the block is an upvalue
	breakable bool
}

type funcState struct {
	f      *lua.FunctionProto
	prev   *funcState
	source string
	bl     *blockCnt

	code  []uint32
	lines []int
	line  int // the line the next instruction is attributed to

	lasttarget int
	jpc        int // jumps to the next instruction, not yet patched
	freereg    int
	nactvar    int
	actvar     []int // DbgLocals index of each active local
	ups        []upvalDesc
	upnames    []string
	maxstack   int

	consts []lua.LValue
	numK   map[float64]int
	strK   map[string]int
	// constTests marks the TESTSETs of a constant whose truth always
	// takes the jump (patchListAux).
	constTests map[int]bool
	over       *lua.LTable // constants past overflowStart (addK)
	overK      int         // its slot, or -1
	nover      int
	nilK       int
	boolK      [2]int
	protos     []*lua.FunctionProto
	// callNames is how each call named its function, by its pc
	// (CallNameOf).
	callNames map[int]lua51.CallName
	hasArg    bool
	isMain    bool
	nparams   int
	// facts are the parser's: its `local function` statements (a `local
	// f = function` is compiled as the plain local it is) and the lines
	// its blocks end on.
	facts *parsed
	// marks, when the chunk was parsed with them, and near, the token
	// Lua 5.1's parser would hold now (near.go).
	marks marks
	near  *nearToken
}

// compileChunk compiles a whole chunk, as lua.Compile does, with what
// the parser knows of it (parseChunk).
func compileChunk(chunk []ast.Stmt, facts *parsed, name string) (proto *lua.FunctionProto, err error) {
	return compileMarked(chunk, facts, nil, name)
}

// compileMarked is compileChunk on a chunk parsed with marks (near.go).
func compileMarked(chunk []ast.Stmt, facts *parsed, m marks, name string) (proto *lua.FunctionProto, err error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*compileError)
			if !ok {
				panic(r)
			}
			proto, err = nil, &CompileError{Chunk: name, Line: ce.line, Message: ce.msg}
		}
	}()
	fs := openFunc(nil, name)
	fs.facts = facts
	fs.marks = m
	fs.isMain = true
	// The main chunk is vararg without the compatibility arg table, as in
	// Lua 5.1.
	fs.f.IsVarArg = lua.VarArgIsVarArg
	fs.line = 1
	if len(chunk) > 0 {
		fs.line = chunk[0].Line()
	}
	fs.chunk(chunk) // the main function's scope, as a function body's
	last := fs.line
	if len(chunk) > 0 {
		last = max(last, chunk[len(chunk)-1].LastLine())
	}
	fs.line = last
	fs.nearAt(endOfChunk{}, after)
	fs.closeFunc()
	return fs.f, nil
}

func openFunc(prev *funcState, source string) *funcState {
	f := &lua.FunctionProto{SourceName: source, NumUsedRegisters: 2}
	fs := &funcState{
		f: f, prev: prev, source: source,
		lasttarget: -1, jpc: noJump, maxstack: 2,
		numK: map[float64]int{}, strK: map[string]int{}, nilK: -1, boolK: [2]int{-1, -1}, overK: -1,
	}
	if prev != nil {
		fs.facts = prev.facts
		fs.marks = prev.marks
	}
	return fs
}

func (fs *funcState) errorf(format string, args ...any) {
	panic(&compileError{line: fs.line, msg: fmt.Sprintf(format, args...)})
}

// errorLimit is Lua 5.1's errorlimit.
func (fs *funcState) errorLimit(limit int, what string) {
	if fs.f.LineDefined == 0 {
		fs.errorf("main function has more than %d %s", limit, what)
	}
	fs.errorf("function at line %d has more than %d %s", fs.f.LineDefined, limit, what)
}

func (fs *funcState) pc() int { return len(fs.code) }

// closeFunc finishes the prototype: the final return, the tables, and the
// merging of runs of moves into OP_MOVEN, as gopher-lua's compiler does.
func (fs *funcState) closeFunc() {
	fs.removeVars(0)
	fs.ret(0, 0)
	f := fs.f
	mergeMoves(fs.code, fs.protos)
	f.Code = fs.code
	f.DbgSourcePositions = fs.lines
	f.Constants = fs.consts
	strs := make([]string, len(fs.consts))
	for i, k := range fs.consts {
		if s, ok := k.(lua.LString); ok {
			strs[i] = string(s)
		}
	}
	setStringConstants(f, strs)
	f.FunctionPrototypes = fs.protos
	f.NumUpvalues = uint8(len(fs.ups))
	f.DbgUpvalues = fs.upnames
	if f.DbgUpvalues == nil {
		f.DbgUpvalues = []string{}
	}
	if f.DbgLocals == nil {
		f.DbgLocals = []*lua.DbgLocalInfo{}
	}
	f.NumUsedRegisters = uint8(fs.maxstack)
}

// mergeMoves turns each run of two or more OP_MOVEs into one OP_MOVEN that
// performs the run (C counts the moves after the first), saving the VM a
// dispatch per move. The later moves stay in place as plain moves, so a
// jump into the middle of the run, or a test that skips its head, still
// runs exactly the moves it reaches. The pseudo-instructions after
// OP_CLOSURE and the extra word of OP_SETLIST are skipped.
func mergeMoves(code []uint32, protos []*lua.FunctionProto) {
	run := 0
	flush := func(end int) {
		if run > 1 {
			setOp(&code[end-run], lua.OP_MOVEN)
			setC(&code[end-run], min(run-1, maxArgC))
		}
		run = 0
	}
	for pc := 0; pc < len(code); pc++ {
		i := code[pc]
		switch op := opcodeOf(i); {
		case op == lua.OP_MOVE:
			run++
			continue
		case op == lua.OP_CLOSURE:
			flush(pc)
			pc += int(protos[int(i&opMaskBx)].NumUpvalues)
			continue
		case op == lua.OP_SETLIST && argC(i) == 0:
			flush(pc)
			pc++
			continue
		}
		flush(pc)
	}
	flush(len(code))
}

// code appends an instruction, first resolving the jumps that were waiting
// for it (jpc).
func (fs *funcState) codeInst(i uint32) int {
	fs.dischargeJpc()
	fs.code = append(fs.code, i)
	fs.lines = append(fs.lines, fs.line)
	return len(fs.code) - 1
}

func (fs *funcState) codeABC(op, a, b, c int) int { return fs.codeInst(makeABC(op, a, b, c)) }
func (fs *funcState) codeABx(op, a, bx int) int   { return fs.codeInst(makeABx(op, a, bx)) }
func (fs *funcState) codeAsBx(op, a, sbx int) int {
	return fs.codeInst(makeABx(op, a, sbx+maxArgSBx))
}

// fixLine attributes the last instruction to line.
func (fs *funcState) fixLine(line int) { fs.lines[len(fs.lines)-1] = line }

// --- constants

// Past overflowStart constants, a constant that may be loaded into a
// register is kept in an overflow table instead of a slot of its own, so a
// function may have any number (a literal of a million numbers): Lua 5.1
// stops at the 262,143 slots LOADK's Bx can reach. The overflow table is
// itself a constant, a table of tables of overflowBase values each, read
// by two OP_GETTABLEs whose keys take regular slots. Slots past
// overflowStart stay for constants that must have one: names of globals,
// those keys, and the table.
const (
	overflowBase  = 4096
	overflowStart = maxConstIndex + 1 - 2*overflowBase
)

func (fs *funcState) addK(v lua.LValue, regular bool) int {
	if !regular && len(fs.consts) >= overflowStart {
		if fs.overK < 0 {
			fs.over = &lua.LTable{Metatable: lua.LNil}
			fs.overK = fs.addK(fs.over, true)
		}
		n := fs.nover
		fs.nover++
		hi, lo := n/overflowBase+1, n%overflowBase+1
		part, ok := fs.over.RawGetInt(hi).(*lua.LTable)
		if !ok {
			part = &lua.LTable{Metatable: lua.LNil}
			fs.over.RawSetInt(hi, part)
		}
		part.RawSetInt(lo, v)
		return maxConstIndex + 1 + n
	}
	if len(fs.consts) > maxConstIndex {
		fs.errorf("constant table overflow")
	}
	fs.consts = append(fs.consts, v)
	return len(fs.consts) - 1
}

// stringK and numberK find or add a constant; regular asks for a slot of
// its own (a global's name, a key of the overflow table).
func (fs *funcState) stringK(s string, regular bool) int {
	if i, ok := fs.strK[s]; ok && (!regular || i <= maxConstIndex) {
		return i
	}
	i := fs.addK(lua.LString(s), regular)
	fs.strK[s] = i
	return i
}

// numberK keys constants by value, as Lua 5.1's table does: 0 and -0 are
// one key, so they share a slot.
func (fs *funcState) numberK(n float64, regular bool) int {
	if i, ok := fs.numK[n]; ok && (!regular || i <= maxConstIndex) {
		return i
	}
	i := fs.addK(lua.LNumber(n), regular)
	fs.numK[n] = i
	return i
}

// loadK loads constant k into reg, from the overflow table if it is there.
func (fs *funcState) loadK(reg, k int) {
	if k <= maxConstIndex {
		fs.codeABx(lua.OP_LOADK, reg, k)
		return
	}
	n := k - maxConstIndex - 1
	fs.codeABx(lua.OP_LOADK, reg, fs.overK)
	// A key past RK's range goes through a free register.
	tmp := max(fs.freereg, reg+1)
	if tmp+1 > fs.maxstack {
		if tmp+1 >= maxStack {
			fs.errorNear(tooComplex)
		}
		fs.maxstack = tmp + 1
	}
	for _, key := range []int{n/overflowBase + 1, n%overflowBase + 1} {
		rk := fs.numberK(float64(key), true)
		if rk <= maxIndexRK {
			rk = rkAsK(rk)
		} else {
			fs.codeABx(lua.OP_LOADK, tmp, rk)
			rk = tmp
		}
		fs.codeABC(lua.OP_GETTABLE, reg, reg, rk)
	}
}

func (fs *funcState) boolConst(b bool) int {
	j := 0
	if b {
		j = 1
	}
	if fs.boolK[j] < 0 {
		fs.boolK[j] = fs.addK(lua.LBool(b), true)
	}
	return fs.boolK[j]
}

func (fs *funcState) nilConst() int {
	if fs.nilK < 0 {
		fs.nilK = fs.addK(lua.LNil, true)
	}
	return fs.nilK
}

// --- registers

func (fs *funcState) checkStack(n int) {
	newstack := fs.freereg + n
	if newstack > fs.maxstack {
		if newstack >= maxStack {
			fs.errorNear(tooComplex)
		}
		fs.maxstack = newstack
	}
}

func (fs *funcState) reserveRegs(n int) {
	fs.checkStack(n)
	fs.freereg += n
}

func (fs *funcState) freeReg(reg int) {
	if !isK(reg) && reg >= fs.nactvar {
		fs.freereg--
		if reg != fs.freereg {
			panic(fmt.Sprintf("luac: freed register %d, top is %d", reg, fs.freereg))
		}
	}
}

// --- jumps

func (fs *funcState) getJump(pc int) int {
	offset := argSBx(fs.code[pc])
	if offset == noJump {
		return noJump
	}
	return pc + 1 + offset
}

func (fs *funcState) fixJump(pc, dest int) {
	offset := dest - (pc + 1)
	if offset > maxArgSBx || -offset > maxArgSBx {
		fs.errorNear(tooLong)
	}
	setSBx(&fs.code[pc], offset)
}

func (fs *funcState) getLabel() int {
	fs.lasttarget = fs.pc()
	return fs.pc()
}

// jumpControl is the instruction that decides whether the jump at pc is
// taken: the test before it, or the jump itself.
func (fs *funcState) jumpControl(pc int) *uint32 {
	if pc >= 1 && testMode(opcodeOf(fs.code[pc-1])) {
		return &fs.code[pc-1]
	}
	return &fs.code[pc]
}

func (fs *funcState) jump() int {
	jpc := fs.jpc
	fs.jpc = noJump
	j := fs.codeAsBx(lua.OP_JMP, 0, noJump)
	fs.concat(&j, jpc)
	return j
}

func (fs *funcState) condJump(op, a, b, c int) int {
	fs.codeABC(op, a, b, c)
	return fs.jump()
}

// needValue says some jump in list is not a TESTSET that can produce its
// own value.
func (fs *funcState) needValue(list int) bool {
	for ; list != noJump; list = fs.getJump(list) {
		if opcodeOf(*fs.jumpControl(list)) != lua.OP_TESTSET {
			return true
		}
	}
	return false
}

func (fs *funcState) patchTestReg(node, reg int) bool {
	i := fs.jumpControl(node)
	if opcodeOf(*i) != lua.OP_TESTSET {
		return false
	}
	if reg != noReg && reg != argB(*i) {
		setA(i, reg)
	} else {
		*i = makeABC(lua.OP_TEST, argB(*i), 0, argC(*i))
	}
	return true
}

func (fs *funcState) removeValues(list int) {
	for ; list != noJump; list = fs.getJump(list) {
		fs.patchTestReg(list, noReg)
	}
}

func (fs *funcState) patchListAux(list, vtarget, reg, dtarget int) {
	for list != noJump {
		next := fs.getJump(list)
		if fs.patchTestReg(list, reg) {
			fs.fixJump(list, vtarget)
		} else {
			fs.fixJump(list, dtarget)
		}
		// A test of a constant that always takes its jump, left with
		// no value to move, becomes that jump: `c and "a" or "b"` runs
		// one instruction less than Lua 5.1's code, as gopher-lua's
		// compiler made it.
		if fs.constTests[list-1] && opcodeOf(fs.code[list-1]) == lua.OP_TEST {
			fs.code[list-1] = makeABx(lua.OP_JMP, 0, fs.getJump(list)-list+maxArgSBx)
		}
		list = next
	}
}

func (fs *funcState) dischargeJpc() {
	fs.patchListAux(fs.jpc, fs.pc(), noReg, fs.pc())
	fs.jpc = noJump
}

func (fs *funcState) patchList(list, target int) {
	if target == fs.pc() {
		fs.patchToHere(list)
	} else {
		fs.patchListAux(list, target, noReg, target)
	}
}

func (fs *funcState) patchToHere(list int) {
	fs.getLabel()
	fs.concat(&fs.jpc, list)
}

func (fs *funcState) concat(l1 *int, l2 int) {
	if l2 == noJump {
		return
	}
	if *l1 == noJump {
		*l1 = l2
		return
	}
	list := *l1
	for {
		next := fs.getJump(list)
		if next == noJump {
			break
		}
		list = next
	}
	fs.fixJump(list, l2)
}

// --- nil and return

func (fs *funcState) loadNil(from, n int) {
	if fs.pc() > fs.lasttarget { // no jump to here
		if fs.pc() == 0 {
			// The VM starts a function with its registers past the
			// parameters set to nil.
			if from >= fs.nactvar {
				return
			}
		} else {
			prev := &fs.code[fs.pc()-1]
			if opcodeOf(*prev) == lua.OP_LOADNIL {
				pfrom, pto := argA(*prev), argB(*prev)
				if pfrom <= from && from <= pto+1 {
					if from+n-1 > pto {
						setB(prev, from+n-1)
					}
					return
				}
			}
		}
	}
	fs.codeABC(lua.OP_LOADNIL, from, from+n-1, 0)
}

func (fs *funcState) ret(first, nret int) {
	fs.codeABC(lua.OP_RETURN, first, nret+1, 0)
}

// --- numbers

// parseNumber reads a NumberExpr's value in the form the parser writes it
// (numberValue): text that strconv.ParseInt with base 0, or else
// strconv.ParseFloat, reads as lua5.1's value ("10" for 010, "+Inf" for
// 1e999).
func parseNumber(s string) (float64, bool) {
	if n, err := strconv.ParseInt(s, 0, 64); err == nil {
		return float64(n), true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if math.IsNaN(v) || strings.Contains(s, "_") {
		return 0, false // ParseFloat's "nan" and digit separators are not numerals
	}
	return v, true
}
