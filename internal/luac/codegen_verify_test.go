package luac

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// verifyProto checks what the VM relies on in every instruction of p and
// its children: registers below NumUsedRegisters, constants and
// prototypes that exist, jumps that land inside the code, OP_CLOSURE
// followed by one pseudo-instruction per upvalue, TFORLOOP by a jump, and
// one line and sensible local ranges for the debug library.
func verifyProto(p *lua.FunctionProto) error {
	n := len(p.Code)
	if len(p.DbgSourcePositions) != n {
		return fmt.Errorf("%d lines for %d instructions", len(p.DbgSourcePositions), n)
	}
	if n == 0 || opcodeOf(p.Code[n-1]) != lua.OP_RETURN {
		return fmt.Errorf("does not end in RETURN")
	}
	regs := int(p.NumUsedRegisters)
	reg := func(pc, r int) error {
		if r >= regs {
			return fmt.Errorf("pc %d: register %d of %d", pc, r, regs)
		}
		return nil
	}
	rk := func(pc, x int) error {
		if isK(x) {
			if x&^bitRK >= len(p.Constants) {
				return fmt.Errorf("pc %d: constant %d of %d", pc, x&^bitRK, len(p.Constants))
			}
			return nil
		}
		return reg(pc, x)
	}
	target := func(pc, sbx int) error {
		if to := pc + 1 + sbx; to < 0 || to >= n {
			return fmt.Errorf("pc %d: jump to %d of %d", pc, to, n)
		}
		return nil
	}
	for pc := 0; pc < n; pc++ {
		i := p.Code[pc]
		a, b, c := argA(i), argB(i), argC(i)
		var err error
		switch op := opcodeOf(i); op {
		case lua.OP_MOVE, lua.OP_MOVEN, lua.OP_UNM, lua.OP_NOT, lua.OP_LEN:
			err = firstErr(reg(pc, a), reg(pc, b))
		case lua.OP_LOADK:
			err = reg(pc, a)
			if int(i&opMaskBx) >= len(p.Constants) {
				err = fmt.Errorf("pc %d: LOADK of constant %d", pc, i&opMaskBx)
			}
		case lua.OP_GETGLOBAL, lua.OP_SETGLOBAL:
			err = reg(pc, a)
			if _, ok := p.Constants[i&opMaskBx].(lua.LString); !ok {
				err = fmt.Errorf("pc %d: global name is %v", pc, p.Constants[i&opMaskBx])
			}
		case lua.OP_LOADNIL:
			err = firstErr(reg(pc, a), reg(pc, b))
		case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
			err = firstErr(reg(pc, a), reg(pc, b), rk(pc, c))
			if op == lua.OP_SELF {
				err = firstErr(err, reg(pc, a+1))
			}
		case lua.OP_SETTABLE, lua.OP_SETTABLEKS, lua.OP_ADD, lua.OP_SUB, lua.OP_MUL, lua.OP_DIV, lua.OP_MOD, lua.OP_POW:
			err = firstErr(reg(pc, a), rk(pc, b), rk(pc, c))
		case lua.OP_EQ, lua.OP_LT, lua.OP_LE:
			err = firstErr(rk(pc, b), rk(pc, c))
			if pc+1 >= n || opcodeOf(p.Code[pc+1]) != lua.OP_JMP {
				err = fmt.Errorf("pc %d: comparison not followed by a jump", pc)
			}
		case lua.OP_CONCAT:
			err = firstErr(reg(pc, a), reg(pc, b), reg(pc, c))
		case lua.OP_JMP:
			err = target(pc, argSBx(i))
		case lua.OP_FORLOOP, lua.OP_FORPREP:
			err = firstErr(reg(pc, a+3), target(pc, argSBx(i)))
		case lua.OP_TFORLOOP:
			err = reg(pc, a+2+c)
			if pc+1 >= n || opcodeOf(p.Code[pc+1]) != lua.OP_JMP {
				err = fmt.Errorf("pc %d: TFORLOOP not followed by a jump", pc)
			}
		case lua.OP_CLOSURE:
			bx := int(i & opMaskBx)
			if bx >= len(p.FunctionPrototypes) {
				return fmt.Errorf("pc %d: prototype %d of %d", pc, bx, len(p.FunctionPrototypes))
			}
			child := p.FunctionPrototypes[bx]
			for u := 0; u < int(child.NumUpvalues); u++ {
				pc++
				if op := opcodeOf(p.Code[pc]); op != lua.OP_MOVE && op != lua.OP_GETUPVAL {
					return fmt.Errorf("pc %d: upvalue %d taken by opcode %d", pc, u, op)
				}
			}
			err = reg(pc, a)
		case lua.OP_SETLIST:
			err = reg(pc, a)
			if c == 0 {
				pc++
			}
		case lua.OP_TEST:
			err = reg(pc, a)
		case lua.OP_TESTSET:
			err = firstErr(reg(pc, a), reg(pc, b))
			if a == noReg {
				err = fmt.Errorf("pc %d: TESTSET left without a target", pc)
			}
		}
		if err != nil {
			return err
		}
	}
	for _, l := range p.DbgLocals {
		if l.StartPc > l.EndPc || l.EndPc > n {
			return fmt.Errorf("local %s lives from %d to %d of %d", l.Name, l.StartPc, l.EndPc, n)
		}
	}
	if len(p.DbgUpvalues) != int(p.NumUpvalues) {
		return fmt.Errorf("%d upvalue names for %d upvalues", len(p.DbgUpvalues), p.NumUpvalues)
	}
	for _, child := range p.FunctionPrototypes {
		if err := verifyProto(child); err != nil {
			return fmt.Errorf("function at line %d: %w", child.LineDefined, err)
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// luaSources lists the Lua files of the repository and of the Lua 5.1
// test suite shipped with gopher-lua's module.
func luaSources(t *testing.T) []string {
	t.Helper()
	var files []string
	root := filepath.Join("..", "..")
	for _, dir := range []string{"scripts", "scripts/bench", "cmd/glua/testdata", "bindings/testdata", "runtime/testdata", "examples"} {
		found, _ := filepath.Glob(filepath.Join(root, dir, "*.lua"))
		files = append(files, found...)
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/gopher-lua").Output(); err == nil {
		found, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "_lua5.1-tests", "*.lua"))
		files = append(files, found...)
	}
	return files
}

// Every Lua file at hand compiles to code that passes verifyProto, and the
// files lua5.1 rejects are rejected here too.
func TestEveryLuaFileCompilesToSoundCode(t *testing.T) {
	files := luaSources(t)
	if len(files) < 30 {
		t.Fatalf("found only %d Lua files", len(files))
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(src)
		if strings.HasPrefix(text, "#") {
			text = "--" + text
		}
		chunk, facts, err := parseChunk([]byte(text), "@"+path, FileLevels, nil)
		if err != nil {
			continue // a syntax error the parser reports; not the compiler's
		}
		proto, err := compileChunk(chunk, facts, path)
		if err != nil {
			if _, lerr := exec.LookPath("lua5.1"); lerr == nil {
				if out, cerr := exec.Command("lua5.1", "-e", "assert(loadfile(arg[1]))", "-", path).CombinedOutput(); cerr == nil {
					t.Errorf("%s: %v, but lua5.1 compiles it (%s)", path, err, out)
				}
			}
			continue
		}
		if err := verifyProto(proto); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// The generated programs' code passes verifyProto too.
func TestGeneratedProgramsCompileToSoundCode(t *testing.T) {
	g := &progGen{rng: rand.New(rand.NewPCG(7, 11))}
	for range 300 {
		src := g.program()
		chunk, facts, err := parseChunk([]byte(src), "=gen", StringLevels, nil)
		if err != nil {
			t.Fatal(err)
		}
		proto, err := compileChunk(chunk, facts, "gen")
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		if err := verifyProto(proto); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
	}
}
