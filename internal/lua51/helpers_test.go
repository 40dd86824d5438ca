package lua51

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// lua51Path finds the reference interpreter, or skips: CI sets
// GLUA_REQUIRE_LUA51=1 so that a missing lua5.1 fails there instead.
func lua51Path(t *testing.T) string {
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

// runLua51 runs src as `lua5.1 -` does, so its chunk is named "stdin",
// and returns what it printed.
func runLua51(t *testing.T, src string) string {
	t.Helper()
	cmd := exec.Command(lua51Path(t), "-")
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lua5.1: %v\n%s", err, out)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// newState is a state as glua sets one up, less the compiler (internal/luac
// changes no library behaviour): the standard libraries, then Open.
func newState(t *testing.T) *lua.LState {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	Open(L)
	return L
}

// runIn runs src in L with print captured, as a chunk named "stdin", and
// returns what it printed. A top-level error is reported after the output
// as "error: " and the error value.
func runIn(t *testing.T, L *lua.LState, src string, protect func(L *lua.LState) error) string {
	t.Helper()
	var out strings.Builder
	L.SetGlobal("print", L.NewFunction(func(L *lua.LState) int {
		for i := 1; i <= L.GetTop(); i++ {
			if i > 1 {
				out.WriteByte('\t')
			}
			out.WriteString(L.ToStringMeta(L.Get(i)).String())
		}
		out.WriteByte('\n')
		return 0
	}))
	fn, err := L.Load(strings.NewReader(src), "stdin")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	L.Push(fn)
	if err := protect(L); err != nil {
		out.WriteString("error: " + errorValue(err).String() + "\n")
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// runGlua runs src the way glua will: Open, then PCall.
func runGlua(t *testing.T, src string) string {
	t.Helper()
	return runIn(t, newState(t), src, func(L *lua.LState) error {
		return PCall(L, 0, lua.MultRet, nil)
	})
}

// runGopherLua runs src on gopher-lua as it comes.
func runGopherLua(t *testing.T, src string) string {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	return runIn(t, L, src, func(L *lua.LState) error {
		return L.PCall(0, lua.MultRet, nil)
	})
}
