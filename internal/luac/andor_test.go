package luac

import (
	"fmt"
	"strings"
	"testing"
)

// andOrOperands are the operands an and/or table is built from: each kind
// of place a value can come from (local, parameter, field, global,
// upvalue, call, constant), falsy and truthy, and "@", which stands for the
// target itself.
var andOrOperands = []string{"lf", "lt", "t.f", "t.y", "g", "uf", "nf()", "tf()", "false", "nil", "1", "@"}

// andOrTargets are the places the tables assign to: a local, a parameter,
// an upvalue, a global, a field and an indexed slot.
var andOrTargets = []string{"x", "p", "u", "G", "t.z", "t[i]"}

// andOrProgram assigns every expression of exprs to target, each after
// resetting target to "old", and prints the target after each.
func andOrProgram(target string, exprs []string) string {
	var b strings.Builder
	b.WriteString(`local t = {f = false, y = 3}
local uf, u = false, "old"
local function nf() end
local function tf() return "T" end
g = nil
local function run(lf, lt, p)
  local x, i = "old", "z2"
`)
	for _, e := range exprs {
		fmt.Fprintf(&b, "  do %s = \"old\"; %s = %s; print(%s) end\n", target, target, strings.ReplaceAll(e, "@", target), target)
	}
	b.WriteString("end\nrun(false, \"L\", \"old\")\n")
	return b.String()
}

// andOrExprs is every `a op b`, `not a op b` and `not (a op b)` over the
// operands and every `(a op b) op c` over all operands for a and six for b
// and c, with and and or in each place.
func andOrExprs() []string {
	ops := []string{"and", "or"}
	var exprs []string
	for _, op := range ops {
		for _, a := range andOrOperands {
			for _, b := range andOrOperands {
				exprs = append(exprs, a+" "+op+" "+b, "not "+a+" "+op+" "+b, "not ("+a+" "+op+" "+b+")")
			}
		}
	}
	inner := []string{"lf", "t.f", "t.y", "g", "nf()", "@"}
	for _, op1 := range ops {
		for _, op2 := range ops {
			for _, a := range andOrOperands {
				for _, b := range inner {
					for _, c := range inner {
						exprs = append(exprs, fmt.Sprintf("(%s %s %s) %s %s", a, op1, b, op2, c))
					}
				}
			}
		}
	}
	return exprs
}

func TestAndOrIntoEveryKindOfTargetPrintsWhatLua51Prints(t *testing.T) {
	runLua51(t, "")
	exprs := andOrExprs()
	for _, target := range andOrTargets {
		t.Run(target, func(t *testing.T) {
			src := andOrProgram(target, exprs)
			want := strings.Split(runLua51(t, src), "\n")
			got := strings.Split(runLuac(t, src), "\n")
			if len(want) != len(exprs) || len(got) != len(exprs) {
				t.Fatalf("%d expressions, lua5.1 printed %d lines, glua %d", len(exprs), len(want), len(got))
			}
			wrong := 0
			for i, e := range exprs {
				if got[i] != want[i] {
					if wrong < 5 {
						t.Errorf("%s = %s: printed %q, lua5.1 prints %q", target, strings.ReplaceAll(e, "@", target), got[i], want[i])
					}
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d expressions differ", wrong, len(exprs))
			}
		})
	}
}
