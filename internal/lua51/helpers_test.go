package lua51

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luatest"
)

func lua51Path(t *testing.T) string { return luatest.Lua51(t) }

// runLua51 runs src as `lua5.1 -` does, so its chunk is named "stdin",
// and returns what it printed.
func runLua51(t *testing.T, src string) string { return luatest.RunLua51(t, src) }

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
	out := luatest.CapturePrint(L)
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
