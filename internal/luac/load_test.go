package luac

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestRuntimeErrorsPointAtTheUsersLine(t *testing.T) {
	cases := []struct {
		name, src, where string
	}{
		{"store into nil table", "local t\nlocal x\nx, t.k = 1, 2\n", "<string>:3:"},
		{"store into nil table on a later line", "local t\nlocal x\nx,\n\n  t.k = 1, 2\n", "<string>:5:"},
		{"arithmetic on the right", "local a, b = 1, nil\na, b = b, a\n\na, b = a + 1, b\n", "<string>:4:"},
		{"error raised in the right", "local a, b\n\n\na, b = error('boom'), 1\n", "<string>:4: boom"},
		{"error inside a nested function", "local f = function()\n  local a, b = 1\n  a, b = a .. b, a\nend\nlocal x, y = 0, 0\nx, y = f(), 1\n", "<string>:3:"},
		{"store into a number", "local n = 5\nlocal a\n\na, n.x = 1, 2\n", "<string>:4:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			want := L.DoString(tc.src)
			if want == nil {
				t.Fatal("gopher-lua runs it without error; the case is wrong")
			}
			fn, err := LoadString(L, tc.src, "=<string>")
			if err != nil {
				t.Fatalf("LoadString: %v", err)
			}
			L.Push(fn)
			got := L.PCall(0, 0, nil)
			if got == nil {
				t.Fatal("ran without error")
			}
			if !strings.HasPrefix(got.Error(), tc.where) {
				t.Errorf("error %q does not start with %q", got, tc.where)
			}
			// Message and traceback are gopher-lua's own, line for line.
			if got.Error() != want.Error() {
				t.Errorf("error\n%s\ngopher-lua gives\n%s", got, want)
			}
		})
	}
}

func TestLoadFileSkipsHashLineAndKeepsLineNumbers(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content string
		wantErr       string
		wantRet       string
	}{
		{"shebang", "#!/usr/bin/env glua\nlocal a, b = 1, 2\na, b = b, a\nreturn a .. b\n", "", "21"},
		{"shebang then error", "#!/usr/bin/env glua\n\nerror('x')\n", ".lua:3: x", ""},
		{"no shebang", "local a, b = 'p', 'q'\na, b = b, a\nreturn a .. b", "", "qp"},
		{"only a shebang", "#!/usr/bin/env glua", "", ""},
		{"empty", "", "", ""},
		{"syntax error after shebang", "#!x\nlocal = 1\n", ".lua:2: '<name>' expected near '='", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".lua")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			L := lua.NewState()
			defer L.Close()
			fn, err := LoadFile(L, path)
			if err == nil {
				L.Push(fn)
				err = L.PCall(0, 1, nil)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				// Positions name the file as Lua 5.1 does, long paths
				// cut to their last part.
				runtime, syntax := ChunkID("@"+path), chunkID("@"+path, syntaxSize)
				if !strings.Contains(err.Error(), runtime+":") && !strings.Contains(err.Error(), syntax+":") {
					t.Errorf("error %q does not name the file as %q or %q", err, runtime, syntax)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := L.Get(-1)
			if tc.wantRet == "" && got != lua.LNil || tc.wantRet != "" && got.String() != tc.wantRet {
				t.Errorf("returned %v, want %q", got, tc.wantRet)
			}
		})
	}
}

func TestLoadFileOfMissingFileIsAFileError(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	path := filepath.Join(t.TempDir(), "missing.lua")
	_, got := LoadFile(L, path)
	var apiErr *lua.ApiError
	if !errors.As(got, &apiErr) || apiErr.Type != lua.ApiErrorFile || !errors.Is(apiErr.Cause, fs.ErrNotExist) {
		t.Fatalf("error %#v is not a file *lua.ApiError caused by a missing file", got)
	}
	// lua5.1's luaL_loadfile message, where gopher-lua's is Go's
	if want := "cannot open " + path + ": No such file or directory"; got.Error() != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

func TestLoadRejectsNilArguments(t *testing.T) {
	if _, err := Load(nil, strings.NewReader(""), "x"); err == nil || !strings.Contains(err.Error(), "luac.Load") {
		t.Errorf("nil state: %v", err)
	}
	L := lua.NewState()
	defer L.Close()
	if _, err := Load(L, nil, "x"); err == nil || !strings.Contains(err.Error(), "luac.Load") {
		t.Errorf("nil reader: %v", err)
	}
	if _, err := LoadFile(nil, "x.lua"); err == nil || !strings.Contains(err.Error(), "luac.LoadFile") {
		t.Errorf("nil state: %v", err)
	}
}

func TestLoadedChunkUsesTheStatesGlobals(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("seen", lua.LNumber(41))
	fn, err := LoadString(L, "seen, other = seen + 1, seen", "=<string>")
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got, other := L.GetGlobal("seen"), L.GetGlobal("other"); got != lua.LNumber(42) || other != lua.LNumber(41) {
		t.Errorf("seen, other = %v, %v; want 42, 41", got, other)
	}
}

// benchSource is a few hundred lines of ordinary Lua with a multiple
// assignment every few lines.
var benchSource = func() string {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		b.WriteString(`
local function step(state, n)
  local a, b, c = state.a, state.b, 0
  for i = 1, n do
    a, b = b, a + b
    c = c + i
    if c > 100 then c, a = a, c end
  end
  state.a, state.b = a, b
  return a, b, c
end
local t = {1, 2, 3, x = "y"}
t[1], t[2], t.x = t[2], t[1], step({a = 0, b = 1}, 10)
`)
	}
	return b.String()
}()

func BenchmarkLoadString(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	b.SetBytes(int64(len(benchSource)))
	for b.Loop() {
		if _, err := LoadString(L, benchSource, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGopherLuaLoadString is the baseline: the same source through
// L.LoadString, gopher-lua's own compiler.
func BenchmarkGopherLuaLoadString(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	b.SetBytes(int64(len(benchSource)))
	for b.Loop() {
		if _, err := L.LoadString(benchSource); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPrecompiledChunksAreRefusedByName: lua5.1 loads luac's bytecode;
// glua compiles source only, and says so under the name lundump.c gives
// the chunk, where it used to report the escape byte as a syntax error.
func TestPrecompiledChunksAreRefusedByName(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	for chunkName, want := range map[string]string{
		"\x1bLua garbage": "binary string: cannot load a precompiled chunk",
		"=named":          "named: cannot load a precompiled chunk",
		"@file.luac":      "file.luac: cannot load a precompiled chunk",
	} {
		_, err := LoadString(L, "\x1bLua garbage", chunkName)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("chunk %q: error %v, want one starting %q", chunkName, err, want)
		}
	}
}
