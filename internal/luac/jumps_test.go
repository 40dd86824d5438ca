package luac

import (
	"testing"
)

// Each loop here goes back to a body that starts with a jump, after an
// earlier loop; gopher-lua's compiler, threading jumps to jumps, read an
// already patched jump's offset as a label number and sent the back jump
// into the earlier loop, which never stopped (a guard counts the first
// loop's turns). The last three are the shapes of issue 30, item 5.
var jumpCases = []struct{ name, src string }{
	{"generic for whose body is break", `for k in pairs({1}) do break end`},
	{"generic for, break in a do block", `for k in pairs({1}) do do break end end`},
	{"generic for, if true then break", `for k in pairs({1}) do if true then break end end`},
	{"generic for, if with a folded condition", `for k, v in ipairs({5, 6}) do if nil or v > 5 then print("big", v) end end`},
	{"generic for, inner while", `for k in pairs({1}) do while true do break end print("after", k) end`},
	{"while true whose body is break", `local n = 0 while true do if true then n = n + 1 break end end print(n)`},
	{"repeat whose body is if true", `local n = 0 repeat if true then n = n + 1 end until n >= 3 print(n)`},
	{"generic for whose body is a folded and/or", `for k in pairs({1}) do local x = false and 1 or 2 end`},
	{"while whose condition compares an or", `local c = 0; while (true or c) == true and c < 3 do c = c + 1 end print(c)`},
	{"loop body starting with a comparison of an or", `local n = 0 while n < 3 do if (nil or false) == nil then end n = n + 1 end print(n)`},
	{"nested loops ending in jumps", `for i = 1, 2 do for k in pairs({1}) do if i then break end end while i do break end end`},
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
