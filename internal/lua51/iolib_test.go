package lua51

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestFileLayoutIsKnown(t *testing.T) {
	newState(t) // Open finds the layout from io.stdin
	if !fileLayout.ok {
		t.Fatal("gopher-lua's file type has no reader *bufio.Reader and closed bool: io.read is gopher-lua's")
	}
}

// TestIOLibraryIsLua51s runs reads, closes, modes, seeks, the default
// files, io.popen, os.execute, os.difftime and os.setlocale, and their
// messages, on files a test
// directory holds, in glua and in lua5.1, each case under pcall; file
// addresses are masked.
func TestIOLibraryIsLua51s(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("line1\n12 3.5 0x10 -7e2\nlast"), 0o644); err != nil {
		t.Fatal(err)
	}
	nums := filepath.Join(dir, "nums.txt")
	if err := os.WriteFile(nums, []byte("  42  \n -3.5e1x 0x1p4 inf nan 1e400 .5 5. -.e1 0X1A.8 1e+ INFINITY infin"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(long, []byte(strings.Repeat("a", 10000)+"\n\nbbbbb\n"+strings.Repeat("c", 70000)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	src := fmt.Sprintf(`local IN, NUMS, OUT, LONG = %q, %q, %q, %q
local function show(...) local t = {} for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end return table.concat(t, "\t") end
local function try(name, f) print(name, show(pcall(f))) end
try("formats", function() local f = io.open(IN); local r = {f:read("*l", "*n", "*n", "*n", "*n", "*l", "*l", "*l", "*a", 0)}; f:close(); return unpack(r, 1, 10) end)
try("a failed format stops", function() local h = io.open(IN); local r = {h:read("*n", "*l", 3)}; h:close(); return #r, r[1] end)
try("counts", function() local h = io.open(IN); local r = {h:read(2, 0, 4, -1, 0, 3)}; h:close(); return unpack(r, 1, 6) end)
try("numbers as fscanf reads them", function() local f = io.open(NUMS); local r = {}
  for i = 1, 14 do local v = f:read("*n"); r[i] = tostring(v); if v == nil then r[i] = r[i] .. "<" .. tostring(f:read(1)) .. ">" end end
  f:close(); return table.concat(r, " ") end)
try("read at the end", function() local f = io.open(IN); f:read("*a"); return f:read(0), f:read("*a"), f:read("*l"), f:read(1), f:read("*n") end)
try("io.read", function() io.input(IN); local a, b = io.read("*l", "*n"); io.input(io.stdin); return a, b end)
try("bad format", function() local f = io.open(IN); return f:read("*x") end)
try("bad option", function() local f = io.open(IN); return f:read("l") end)
try("bad option type", function() local f = io.open(IN); return f:read({}) end)
try("lines", function() local h = io.open(IN); local n = 0; for a, b in h:lines() do n = n + 1; assert(b == nil) end; h:close(); return n end)
for _, m in ipairs({"r", "rb", "r+", "r+b", "rb+", "rw", "rz", "rt", "z", "", "w+x"}) do
  try("mode " .. m, function() local f, e, n = io.open(m:find("w") and OUT or IN, m); if f then local t = io.type(f); f:close(); return t end; return f, (e:gsub("^.*: ", "")), n end)
end
try("closed read", function() local f = io.open(IN); f:close(); return f:read() end)
try("closed close", function() local f = io.open(IN); f:close(); return f:close() end)
try("closed lines", function() local f = io.open(IN); f:close(); return f:lines() end)
try("closed seek", function() local f = io.open(IN); f:close(); return f:seek() end)
try("closed write", function() local f = io.open(OUT, "w"); f:close(); return f:write("x") end)
try("closed tostring", function() local f = io.open(IN); f:close(); return tostring(f) end)
try("open tostring", function() local f = io.open(IN); local s = tostring(f); f:close(); return s:match("^file %%(0x%%x+%%)$") ~= nil end)
try("close a standard file", function() return io.close(), io.stdout:close(), io.stderr:close(), io.type(io.stdout) end)
try("write a table", function() return io.write({}) end)
try("write a table to a file", function() local f = io.open(OUT, "w"); local ok, e = pcall(f.write, f, 1, {}); f:close(); return ok, e end)
try("write returns its file", function() local f = io.open(OUT, "w"); local r = f:write("a", 1, 2.5) == f; f:close(); return r, io.write() == io.stdout end)
try("seek option", function() local f = io.open(IN); return f:seek("bogus") end)
try("seek before the start", function() local f = io.open(IN); return f:seek("set", -5) end)
try("seek and read", function() local f = io.open(IN); return f:seek("set", 2), f:read(3), f:seek("cur"), f:seek("end"), f:read(1) end)
try("setvbuf", function() return io.stdout:setvbuf("no"), io.stdout:setvbuf("line"), io.stdout:setvbuf("full", 1024) end)
try("setvbuf option", function() return io.stdout:setvbuf("x") end)
try("popen", function() local p = io.popen("echo hi"); local s = p:read("*a"); return s, p:close() end)
try("popen failing", function() local p = io.popen("exit 3"); p:read("*a"); return p:close() end)
try("tmpfile", function() local t = io.tmpfile(); t:write("xy", 3); t:seek("set"); return t:read("*a") end)
try("input by name", function() local f = io.input(IN); local l = io.read(); io.input(io.stdin); return io.type(f), l end)
try("input missing", function() return io.input(IN .. ".missing") end)
try("input a table", function() return io.input({}) end)
try("input a closed file", function() local f = io.open(IN); f:close(); return io.input(f) end)
try("output by name", function() io.output(OUT); io.write("x", 1); io.output():close(); io.output(io.stdout); local f = io.open(OUT); local s = f:read("*a"); f:close(); return s end)
try("write to a closed output", function() local f = io.output(OUT); f:close(); local ok, e = pcall(io.write, "x"); io.output(io.stdout); return ok, e end)
try("read from a closed input", function() local f = io.input(IN); f:close(); local ok, e = pcall(io.read); io.input(io.stdin); return ok, e end)
try("read a write-only file", function() local f = io.open(OUT, "w"); local r = {f:read()}; f:close(); return unpack(r, 1, 3) end)
try("write a read-only file", function() local f = io.open(IN); local r = {f:write("x")}; f:close(); return unpack(r, 1, 3) end)
try("io.type of nothing", function() return io.type(nil), io.type({}), io.type() end)
try("difftime", function() return os.difftime(10.9, 2.5), os.difftime(3) end)
try("tmpname", function() local a, b = os.tmpname(), os.tmpname(); local f = io.open(a); local r = {a:match("^/tmp/lua_%%w%%w%%w%%w%%w%%w$") ~= nil, a ~= b, io.type(f), f:read("*a")}; f:close(); os.remove(a); os.remove(b); return unpack(r) end)
try("execute", function() return os.execute("exit 3"), os.execute("true"), os.execute() end)
local function lengths(it) local r = {} for l in it do r[#r + 1] = #l end return table.concat(r, ",") end
try("io.lines of long lines", function() return lengths(io.lines(LONG)) end)
try("file:lines of long lines", function() local f = io.open(LONG); local r = lengths(f:lines()); f:close(); return r end)
try("io.lines of the default input", function() io.input(LONG); local r = lengths(io.lines()); io.input(io.stdin); return r end)
try("io.lines past its end", function() local it = io.lines(IN); it(); it(); it(); return it(), pcall(it) end)
try("file:lines of a closed file", function() local f = io.open(IN); local it = f:lines(); f:close(); return pcall(it) end)
try("popen for writing", function() local p = io.popen("cat > " .. OUT, "w"); p:write("hello ", 42); local c = p:close(); local f = io.open(OUT); local s = f:read("*a"); f:close(); return c, s end)
try("popen lines", function() local p = io.popen("printf 'a\\nb\\n'"); local r = {} for l in p:lines() do r[#r + 1] = l end; return #r, r[2], p:close() end)
try("popen numbers", function() local p = io.popen("echo 0x1F 2"); local a, b = p:read("*n", "*n"); p:close(); return a, b end)
try("popen type", function() local p = io.popen("true"); local t = io.type(p); p:close(); return t, io.type(p), tostring(p) end)
try("popen mode", function() return io.popen("true", "x") end)
try("popen seek", function() local p = io.popen("echo x"); local r = {p:seek("set")}; p:close(); return unpack(r) end)
try("setlocale", function() return os.setlocale(), os.setlocale("C"), os.setlocale(nil, "numeric"), os.setlocale("xx_YY"), os.setlocale("POSIX", "all") end)
try("setlocale category", function() return os.setlocale("C", "bogus") end)
print("still writing")`, in, nums, out, long)
	mask := regexp.MustCompile(`0x[0-9a-f]+`)
	// each run starts with out.txt as the other found it
	fresh := func() {
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fresh()
	got := mask.ReplaceAllString(runGlua(t, src), "0x?")
	fresh()
	want := mask.ReplaceAllString(runLua51(t, src), "0x?")
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(g), len(w)) {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Errorf("glua:   %q\nlua5.1: %q", gl, wl)
			}
		}
	}
}
