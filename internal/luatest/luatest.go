// Package luatest holds what glua's tests of Lua behaviour share: the
// reference interpreter, lua5.1, to compare against, and a print that
// records what a script prints. Only tests import it.
package luatest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// Lua51 finds the reference interpreter, or skips: CI sets
// GLUA_REQUIRE_LUA51=1 so that a missing lua5.1 fails there instead.
func Lua51(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("lua5.1")
	if err != nil {
		if os.Getenv("GLUA_REQUIRE_LUA51") != "" {
			t.Fatalf("GLUA_REQUIRE_LUA51 is set but lua5.1 is not installed: %v", err)
		}
		t.Skip("lua5.1 not installed (apt-get install lua5.1); set GLUA_REQUIRE_LUA51=1 to fail instead")
	}
	return path
}

// RunLua51 runs src as `lua5.1 -` does, so its chunk is named "stdin",
// and returns what it printed, without the last newline. An error exit
// fails the test.
func RunLua51(t testing.TB, src string) string {
	t.Helper()
	cmd := exec.Command(Lua51(t), "-")
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s", err, out)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// CapturePrint replaces L's print with one that writes to the returned
// builder, tab-separated and a line per call, each value written by the
// global tostring, as Lua 5.1's print does: so a state with glua's
// tostring prints numbers as Lua 5.1 does, and plain gopher-lua as it does.
func CapturePrint(L *lua.LState) *strings.Builder {
	out := &strings.Builder{}
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		top := L.GetTop()
		for i := 1; i <= top; i++ {
			if i > 1 {
				out.WriteByte('\t')
			}
			L.Push(L.GetGlobal("tostring"))
			L.Push(L.Get(i))
			L.Call(1, 1)
			out.WriteString(L.ToStringMeta(L.Get(-1)).String())
			L.Pop(1)
		}
		out.WriteByte('\n')
		return 0
	}))
	return out
}
