package luac

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// doLua runs src in L and returns its results rendered with tostring,
// joined by tabs.
func doLua(t *testing.T, L *lua.LState, src string) string {
	t.Helper()
	top := L.GetTop()
	fn, err := LoadString(L, src, "=stdin") // lua5.1 - names its chunk so
	if err != nil {
		t.Fatalf("LoadString: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	var parts []string
	for i := top + 1; i <= L.GetTop(); i++ {
		parts = append(parts, L.ToStringMeta(L.Get(i)).String())
	}
	L.SetTop(top)
	return strings.Join(parts, "\t")
}

func installed() *lua.LState {
	L := lua.NewState()
	Install(L)
	return L
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// luaString quotes s as a Lua string literal.
func luaString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

func TestInstalledLoadersCompileSwapsCorrectly(t *testing.T) {
	dir := t.TempDir()
	swap := "local a, b = 1, 2; a, b = b, a; return a, b"
	file := writeFile(t, dir, "swap.lua", "#!/usr/bin/env glua\n"+swap+"\n")
	writeFile(t, dir, "swapmod.lua", "local M = {}\nfunction M.swap(x, y) x, y = y, x; return x, y end\nreturn M\n")
	cases := []struct{ name, src string }{
		{"loadstring", `return loadstring(` + luaString(swap) + `)()`},
		{"load", `
			local pieces, i = {"local a, b = 1, 2; ", "a, b = b, a; ", "return a, b"}, 0
			return load(function() i = i + 1; return pieces[i] end)()`},
		{"loadfile", `return loadfile(` + luaString(file) + `)()`},
		{"dofile", `return dofile(` + luaString(file) + `)`},
		{"require", `
			package.path = ` + luaString(filepath.Join(dir, "?.lua")) + `
			return require("swapmod").swap(1, 2)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := installed()
			defer L.Close()
			if got := doLua(t, L, tc.src); got != "2\t1" {
				t.Errorf("returned %q, want \"2\\t1\"", got)
			}
		})
	}
}

// The load family's failures other than files', syntax errors and the
// reader's (which are lua5.1's, below) look exactly as they do with
// gopher-lua's own loaders.
func TestInstalledLoadersKeepGopherLuaMessages(t *testing.T) {
	cases := []struct{ name, src string }{
		{"loadstring bad argument", `return pcall(loadstring)`},
		{"load of nothing", `return type(load(function() end))`},
		{"require with package.path not a string", `package.path = 1; return pcall(require, "x")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plain := lua.NewState()
			defer plain.Close()
			want := doLua(t, plain, tc.src)
			L := installed()
			defer L.Close()
			if got := doLua(t, L, tc.src); got != want {
				t.Errorf("got\n%s\ngopher-lua gives\n%s", got, want)
			}
		})
	}
}

// Syntax errors and chunk names are lua5.1's: loadstring's chunk is
// [string "..."], load's "=(load)", a file's its path.
func TestInstalledLoadersFailAsLua51Does(t *testing.T) {
	runLua51(t, "")
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.lua", "local x = = 1\n")
	raise := writeFile(t, dir, "raise.lua", "\nerror('inner')\n")
	cases := []struct{ name, src string }{
		{"loadstring syntax error", `return loadstring("x = = 1")`},
		{"loadstring chunk name", `return loadstring("x = = 1", "=named")`},
		{"loadstring file chunk name", `return loadstring("x = = 1", "@named.lua")`},
		{"loadstring long first line", `return loadstring(string.rep("x", 70) .. " = = 1\nmore")`},
		{"loadstring runtime error", `return pcall(loadstring("local t = nil\nerror('boom')"))`},
		{"loadstring long runtime error", `return pcall(loadstring(string.rep("-", 50) .. "\nerror('e')"))`},
		{"load syntax error", `local done; return load(function() if not done then done = true; return "a, b c" end end)`},
		{"load chunk name", `local done; return load(function() if not done then done = true; return "x = = 1" end end, "nm")`},
		{"load runtime error", `local done; return pcall(load(function() if not done then done = true; return "error('x')" end end))`},
		// lua_load runs the reader protected: its errors come back as nil
		// and the message (under pcall, as lua.c's traceback handler
		// would otherwise be appended to them)
		{"load reader raising", `return pcall(function() return load(function() error("boom") end) end)`},
		{"load reader raising a table", `return pcall(function() local f, e = load(function() error({1}) end) return f, type(e), e[1] end)`},
		{"load reader raising at level 2", `return pcall(function() return load(function() error("lvl", 2) end) end)`},
		{"load reader giving a table", `return pcall(function() return load(function() return {} end) end)`},
		{"load reader giving a number", `local n = 0; return pcall(load(function() n = n + 1; if n == 1 then return "return 4" elseif n == 2 then return 2 end end))`},
		{"loadfile syntax error", `return loadfile(` + luaString(bad) + `)`},
		{"dofile syntax error", `return pcall(dofile, ` + luaString(bad) + `)`},
		{"dofile raising", `return pcall(dofile, ` + luaString(raise) + `)`},
		{"loadfile missing", `return loadfile(` + luaString(filepath.Join(dir, "missing.lua")) + `)`},
		{"dofile missing", `return pcall(dofile, ` + luaString(filepath.Join(dir, "missing.lua")) + `)`},
		{"getinfo of a loaded string", `local i = loadstring("return debug.getinfo(1, 'S')")() return i.source, i.short_src`},
		{"getinfo of a named string", `local i = loadstring("return debug.getinfo(1, 'S')", "=nm")() return i.source, i.short_src`},
		{"getinfo of a file", `local i = dofile(` + luaString(writeFile(t, dir, "info.lua", "return debug.getinfo(1, 'S')")) + `) return i.source, i.short_src`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := runLua51(t, "print((function() "+tc.src+" end)())")
			L := installed()
			defer L.Close()
			lua51.Open(L)
			if got := doLua(t, L, tc.src); got != want {
				t.Errorf("got\n%s\nlua5.1 gives\n%s", got, want)
			}
		})
	}
}

func TestRequireOfABadModuleGivesLua51SyntaxError(t *testing.T) {
	dir := t.TempDir()
	mod := writeFile(t, dir, "badmod.lua", "return {\n")
	L := installed()
	defer L.Close()
	got := doLua(t, L, `package.path = `+luaString(filepath.Join(dir, "?.lua"))+`; return pcall(require, "badmod")`)
	want := chunkID("@"+mod, syntaxSize) + ":2: unexpected symbol near '<eof>'"
	if !strings.Contains(got, want) {
		t.Errorf("got %q, want it to contain %q", got, want)
	}
}

func TestInstallReplacesOnlyWhatIsThere(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	// A sandbox: no loadstring, dofile wrapped by the host.
	L.SetGlobal("loadstring", lua.LNil)
	L.SetGlobal("dofile", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("dofile is disabled")
		return 0
	}))
	Install(L)
	if L.GetGlobal("loadstring") != lua.LNil {
		t.Error("Install brought back a removed loadstring")
	}
	if got := doLua(t, L, `local ok, msg = pcall(dofile, "x"); return msg`); !strings.Contains(got, "dofile is disabled") {
		t.Errorf("the host's dofile was replaced: %q", got)
	}
	if got := doLua(t, L, `return load(function() return nil end) ~= nil, loadfile ~= nil`); got != "true\ttrue" {
		t.Errorf("load or loadfile missing after Install: %q", got)
	}
	if got := doLua(t, L, `local p = {"local a, b = 1, 2; a, b = b, a; return a, b"}; return load(function() return table.remove(p) end)()`); got != "2\t1" {
		t.Errorf("load was not replaced: %q", got)
	}
}

func TestInstallOnBareStatesDoesNotPanic(t *testing.T) {
	Install(nil)

	bare := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer bare.Close()
	Install(bare)

	// Base library only: no package table.
	base := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer base.Close()
	base.Push(base.NewFunction(lua.OpenBase))
	base.Call(0, 0)
	Install(base)
	if got := doLua(t, base, `return loadstring("local a, b = 1, 2; a, b = b, a; return a, b")()`); got != "2\t1" {
		t.Errorf("got %q", got)
	}
}

func TestInstallTwiceIsHarmless(t *testing.T) {
	L := installed()
	defer L.Close()
	before := L.GetGlobal("loadstring")
	Install(L)
	if L.GetGlobal("loadstring") != before {
		t.Error("a second Install replaced the replacement")
	}
	if got := doLua(t, L, `return loadstring("local a, b = 1, 2; a, b = b, a; return a, b")()`); got != "2\t1" {
		t.Errorf("got %q", got)
	}
}

// Both searchers are replaced, for lua5.1's messages ("\n\tno field
// package.preload['m']", "\n\tno file './m.lua'"); preloading still works.
func TestInstallReplacesBothSearchers(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	loaders := L.GetField(L.GetGlobal("package"), "loaders").(*lua.LTable)
	preload := loaders.RawGetInt(1)
	file := loaders.RawGetInt(2)
	Install(L)
	if loaders.RawGetInt(1) == preload {
		t.Error("the preload searcher was not replaced")
	}
	if loaders.RawGetInt(2) == file {
		t.Error("the Lua file searcher was not replaced")
	}
	if got := doLua(t, L, `package.path = "/nowhere/?.lua;;/nowhere/?/init.lua" return package.loaders[1]("m"), package.loaders[2]("m")`); got != "\n\tno field package.preload['m']\t\n\tno file '/nowhere/m.lua'\n\tno file '/nowhere/m/init.lua'" {
		t.Errorf("the searchers said %q", got)
	}
	L.PreloadModule("pre", func(L *lua.LState) int {
		L.Push(lua.LString("preloaded"))
		return 1
	})
	if got := doLua(t, L, `return require("pre")`); got != "preloaded" {
		t.Errorf("require of a preloaded module gave %q", got)
	}
}
