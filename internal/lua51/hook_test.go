package lua51

import (
	"context"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// A line hook set in a chunk traces the rest of it at once, jumps back
// included; a count hook counts; the hook outlives a change of context
// (the runtime sets one for each run), and clearing it stops the events.
func TestSethookTracesLinesAndCounts(t *testing.T) {
	L := newState(t)
	protect := func(L *lua.LState) error { return L.PCall(0, 0, nil) }
	got := runIn(t, L, `lines = {}
debug.sethook(function(e, l) lines[#lines + 1] = e .. l end, "l")
for i = 1, 2 do
  local x = i
end
debug.sethook()
print(table.concat(lines, " "))
print(debug.gethook())`, protect)
	if want := "line3 line4 line3 line4 line3 line6\nnil\t\t0"; got != want {
		t.Errorf("line trace:\n%s\nwant\n%s", got, want)
	}
	got = runIn(t, L, `n = 0
debug.sethook(function(e) n = n + 1 end, "", 1)`, protect)
	L.SetContext(context.Background()) // gopher-lua puts its own loop back
	KeepHook(L)
	got += runIn(t, L, `local a = 1
local b = 2
debug.sethook()
print(n > 3, select(3, debug.gethook()))`, protect)
	if want := "true\t0"; got != want {
		t.Errorf("count across a change of context: %q, want %q", got, want)
	}
	L.RemoveContext()
	got = runIn(t, L, `print(pcall(debug.sethook, print, "cr"))`, protect)
	if !strings.Contains(got, `call and return events ("c" and "r") are not supported`) {
		t.Errorf("a call hook: %q", got)
	}
}
