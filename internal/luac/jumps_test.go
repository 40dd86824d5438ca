package luac

import (
	"strings"
	"testing"
)

// Each loop here goes back to a body that starts with a jump, after an
// earlier loop; gopher-lua alone sends the back jump into the earlier
// loop and never stops (a guard counts the first loop's turns).
var jumpCases = []struct{ name, src string }{
	{"generic for whose body is break", `for k in pairs({1}) do break end`},
	{"generic for, break in a do block", `for k in pairs({1}) do do break end end`},
	{"generic for, if true then break", `for k in pairs({1}) do if true then break end end`},
	{"generic for, if with a folded condition", `for k, v in ipairs({5, 6}) do if nil or v > 5 then print("big", v) end end`},
	{"generic for, inner while", `for k in pairs({1}) do while true do break end print("after", k) end`},
	{"while true whose body is break", `local n = 0 while true do if true then n = n + 1 break end end print(n)`},
	{"repeat whose body is if true", `local n = 0 repeat if true then n = n + 1 end until n >= 3 print(n)`},
}

func TestLoopsStartingWithAJumpPrintWhatLua51Prints(t *testing.T) {
	runLua51(t, "")
	const first = "local turns = 0\nfor _, v in ipairs({1, 2}) do turns = turns + 1; if turns > 2 then error('the first loop ran again') end; print(v) end\n"
	for _, tc := range jumpCases {
		t.Run(tc.name, func(t *testing.T) {
			src := first + tc.src + "\nprint('done')\n"
			want := runLua51(t, src)
			if got := runLuac(t, src); got != want {
				t.Errorf("printed %q, lua5.1 prints %q", got, want)
			}
		})
	}
}

// Loops whose bodies start with anything else are compiled as written: the
// guard costs an instruction a turn.
func TestOrdinaryLoopsGetNoGuard(t *testing.T) {
	src := `for i, v in ipairs(t) do if v > 1 then print(v) end end
while x do x = f() end
repeat y = y + 1 until y > 3
for k = 1, 3 do break end`
	chunk, err := Parse(strings.NewReader(src), "=<string>", StringLevels)
	if err != nil {
		t.Fatal(err)
	}
	chunk, rerr := rewriteChunk(chunk)
	if rerr != nil {
		t.Fatal(rerr.msg)
	}
	if dump := dumpTree(chunk); strings.Contains(dump, jumpTargetName) {
		t.Errorf("a guard in\n%s", dump)
	}
}
