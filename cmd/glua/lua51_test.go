package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gluaproject/glua/internal/luatest"
)

// sideBySide is one command line run by both glua and the reference lua5.1
// in testdata/. Both must exit alike and print the same stdout; stderr is
// compared after naming both interpreters "glua" and gopher-lua's "[G]"
// frames "[C]".
type sideBySide struct {
	name  string
	args  []string
	stdin string
	// firstLine, when set, is a pattern that the first line of stderr must
	// match for both, instead of the lines being equal: gopher-lua words
	// some messages differently (runtime and syntax errors).
	firstLine string
	// shape compares the rest of stderr only by its shape (a traceback or
	// none, its lines indented) instead of exactly.
	shape bool
	// contains is text both stderrs must hold, for the usage message,
	// which lists glua's own options too.
	contains string
	// gluaFails marks where glua exits 1 and lua5.1 exits 0: lua 5.1 ignores
	// the status of stdin run without a script (lua 5.4 reports it).
	gluaFails bool
}

var sideBySideCases = []sideBySide{
	// The arg table and the script's arguments.
	{name: "arg holds script, arguments and options at negative indices",
		args: []string{"-e", "x=1", "args.lua", "a", "b c", ""}},
	{name: "-l before the script is in arg too", args: []string{"-l", "greeting", "args.lua", "x"}},
	{name: "-- before the script", args: []string{"--", "args.lua", "-v", "--"}},
	{name: "options after the script are its arguments", args: []string{"args.lua", "-e", "error()", "-x"}},
	{name: "no script means no arg table", args: []string{"-e", "print(arg)"}},
	{name: "a script named - after -- is a file", args: []string{"--", "-"}},

	// -e and -l run in order, before the script.
	{name: "-e chunks run in order", args: []string{"-e", "x = 1", "-e", "print(x)", "-e", "x = x * 10", "-eprint(x)"}},
	{name: "-e runs before the script", args: []string{"-e", "print('first')", "args.lua"}},
	{name: "an error in -e stops the rest", args: []string{"-e", "print(1)", "-e", "error('stop')", "-e", "print(2)", "args.lua"}},
	{name: "a syntax error in -e", args: []string{"-e", "print(("}},
	{name: "a syntax error in a string -e loads", args: []string{"-e", "print(loadstring('x = = 1'))"}},
	// gopher-lua's traceback calls a loaded chunk "function <name:0>" where
	// lua says "main chunk": the first lines are compared.
	{name: "a runtime error in a string -e loads names the string", args: []string{"-e", "loadstring('error(42)')()"},
		firstLine: `^glua: \[string "error\(42\)"\]:1: 42$`, shape: true},
	{name: "a runtime error in a named string", args: []string{"-e", "loadstring('\\nerror(42)', '=chunk')()"},
		firstLine: `^glua: chunk:2: 42$`, shape: true},
	{name: "goto is a name", args: []string{"-e", "local goto = 1; print(goto + 1)"}},
	{name: "a call on the next line is ambiguous", args: []string{"-e", "local x = print\n('a')"}},
	{name: "-l requires a module", args: []string{"-l", "greeting", "-e", "print(greeting_loads)"}},
	{name: "-l twice loads once", args: []string{"-lgreeting", "-l", "greeting", "-e", "print(greeting_loads)"}},
	{name: "-l of a missing module", args: []string{"-l", "nomodule", "-e", "print('not reached')"},
		firstLine: `^glua: +module 'nomodule' not found:$`, shape: true},
	// package.cpath empty: glua has no C searchers to list
	{name: "require's messages", args: []string{"-e", `package.path = "./?.lua;;./?/init.lua" package.cpath = ""
print(pcall(require, "nomodule")) print(pcall(require, "badsyntax"))
print(pcall(require, "raising")) print(pcall(require, "raising")) print(require("greeting") == require("greeting"))`}},
	{name: "stack levels, the debug library, getfenv, setfenv and newproxy", args: []string{"levels.lua"}},
	{name: "__index and __newindex loops", args: []string{"metaloop.lua"}},
	{name: "print calls the global tostring", args: []string{"print.lua"}},
	{name: "debug.sethook's line and count events", args: []string{"hooks.lua"}},
	{name: "loadfile and dofile of a missing file", args: []string{"-e", `print(loadfile("missing.lua")) print(pcall(dofile, "missing.lua"))`}},

	// stdin.
	{name: "- runs stdin with arguments", args: []string{"-", "a", "b"}, stdin: "print(arg[0], ...)\n"},
	{name: "no arguments run stdin when it is not a terminal", stdin: "print('from stdin', arg)\n"},
	{name: "-- alone runs stdin", args: []string{"--"}, stdin: "print('from stdin')\n"},
	{name: "-l then stdin", args: []string{"-l", "greeting"}, stdin: "print(greeting_loads)\n"},
	{name: "an error in stdin is named stdin", args: []string{"-"}, stdin: "\nerror('in stdin')\n"},
	{name: "an error in stdin run without arguments fails", stdin: "error('in stdin')\n", gluaFails: true},

	// Errors.
	{name: "error in a script prints a traceback", args: []string{"error.lua"}},
	{name: "error with level 0 has no position", args: []string{"error_values.lua", "level0"}},
	{name: "error(nil) prints nothing and fails", args: []string{"error_values.lua", "nil"}},
	{name: "error with a table", args: []string{"error_values.lua", "table"}},
	{name: "runtime error", args: []string{"index_nil.lua"},
		firstLine: `^glua: index_nil\.lua:2: attempt to index .*$`},
	{name: "debug.traceback shows 11 levels, then ..., then the last 10", args: []string{"-"}, stdin: `
local function f(n) if n == 0 then return debug.traceback("m") end return (f(n-1)) end
for _, n in ipairs({5, 9, 10, 20, 21, 22, 30}) do print(n, (select(2, f(n):gsub("\n", "\n")))) end
print(f(25))`},
	{name: "debug.traceback from a level", args: []string{"-"}, stdin: `
local function g(n, lv) if n == 0 then return debug.traceback("m", lv) end return (g(n-1, lv)) end
print(g(1, 0))
print(g(30, 14))
print(g(2, "3"))
print(debug.traceback(nil), debug.traceback(12), type(debug.traceback({})))
print(debug.traceback(""))`},
	{name: "debug.traceback names Go functions and tail calls", args: []string{"-"}, stdin: `
local function t1() return debug.traceback("tail") end
local function t2() return t1() end
print(t2())
print(pcall(debug.traceback, "p"))
print(xpcall(function() error("e") end, debug.traceback))`},
	{name: "debug.traceback of a coroutine", args: []string{"-"}, stdin: `
local co = coroutine.create(function() local x = debug.traceback("in") coroutine.yield(x) end)
print(coroutine.resume(co))
print(debug.traceback(co, "suspended"))
local co2 = coroutine.create(function() local y = coroutine.yield; y() end)
coroutine.resume(co2)
print(debug.traceback(co2))
coroutine.resume(co2)
print(debug.traceback(co2, "dead"))`},
	// glua's message names the [lua] setting after Lua 5.1's words.
	{name: "a stack overflow has the caller's position and a handler is called for it", args: []string{"-"}, stdin: `
local function y() y() end
local ok, m = pcall(y)
print(ok, m:match("^stdin:2: stack overflow"))
local _, tb = xpcall(y, debug.traceback)
print((tb:gsub("^[^\n]*", "")))
print(xpcall(y, function(m) return "handled" end))`},
	{name: "an uncaught stack overflow", args: []string{"-e", "function y() y() end y()"},
		firstLine: `^glua: \(command line\):1: stack overflow`},
	// luaL_error puts the position of the running function's caller, none
	// for a Go function such as pcall; error, assert and coroutine.wrap's
	// functions word their own.
	{name: "errors of library functions called straight from pcall have no position", args: []string{"-"}, stdin: `
print(pcall(assert, false))
print(pcall(assert, false, "msg"))
print(pcall(assert, nil, 12))
print(pcall(assert, false, "100%"))
print(pcall(error))
print(pcall(error, "x"))
print(pcall(error, "x", 2))
print(pcall(string.rep))
print(pcall(string.gsub, "x", "x", {x = true}))
print(pcall(string.gsub, "x", "x", function() return {} end))
print(pcall(string.gsub, "x", "x", "%2"))
print(pcall(string.format, "%y", 1))
print(pcall(setmetatable, 1, {}))
print(pcall(table.concat, {{}}))
print(pcall(coroutine.wrap(function() error("in co") end)))
print(pcall(coroutine.wrap(function() local x = nil; x() end)))
print(pcall(function() return string.gsub("x", "x", {x = true}) end))
print(pcall(function() assert(false) end))
print(pcall(function() error("lv2", 2) end))
print(pcall(table.insert, {}, 1, 2, 3))
print(pcall(next, {}, "nokey"))
print(pcall(coroutine.wrap(function() assert(false) end)))
print(pcall(table.sort, {1, 2, 3}, function(a, b) error("cmp") end))
print(pcall(table.sort, {1, 2, 3}, function(a, b) error("cmp", 2) end))
print(pcall(pcall, assert, false))
print(pcall(pcall, error, "x", 3))
print(select(2, pcall(error, "lvl3", 3)))
print(pcall(string.gsub, "abc", "%w", function(c) error("in repl") end))
print(pcall(string.gsub, "abc", "%w", function(c) error("in repl", 2) end))
print(pcall(string.gsub, "abc", "%w", function(c) error("in repl", 3) end))
print(pcall(string.gsub, "abc", "%w", {a = {}}))
local function f() return string.gsub("abc", "%w", {a = {}}) end
print(pcall(f))
print(pcall(function() local t = setmetatable({}, {__index = function(t, k) error("idx", 2) end}) return t.x end))
print(pcall(tostring, setmetatable({}, {__tostring = function() error("ts") end})))
print(xpcall(assert, function(m) return "h:" .. tostring(m) end))
print(pcall(string.format, "%d", "x"))
print(pcall(loadstring("error('in chunk', 2)")))
print(pcall(rawset, {}, nil, 1))
print(pcall(math.random, 2, 1))`},
	{name: "a number given where a string is wanted reads as %.14g", args: []string{"-"}, stdin: `
local third, inf, big, nan, mz = 1/3, 1/0, 2^53, 0/0, -(0*1)
print(string.len(inf), string.len(third), string.len(big), string.len(-inf), string.len(1e15), string.len(mz))
print(string.upper(inf), string.lower(-inf), string.reverse(third), string.sub(big, 2, 5), string.rep(third, 2, "x"))
print(string.byte(inf, 1, -1))
print(string.find(third, "3+"), string.find(big, "e", 1, true))
print(string.match(big, "%d+"), string.match(1e100, "e(.*)"))
for w in string.gmatch(third, "3") do io.write(w) end print()
print(string.gsub(third, "3", "x"))
print(string.gsub(123, 2, 9))
print(string.gsub("a1b", "%d", 2.5))
print(string.format("%s %s %5.1s", third, inf, third))
print(table.concat({third, inf, big}, third))
io.write(third, " ", inf, " ", big, "\n")
print(tostring(third), third .. "", inf .. "|", ("x"):rep(2) .. 1/3)
print(("x"):rep(3, 0.5))
print(string.rep(1/3, 2))
print(#tostring(1e300 * 10), tostring(-nan) ~= nil)
print(pcall(string.rep, {}))
print(string.sub(3.7, 2))
print(tonumber(string.sub(1e15, 1)))
print(table.concat({1, 2}, 1/3))
print(tonumber(10, 16), tonumber(1/0, 10))
print(loadstring(1/3))
print(select(2, loadstring(1/0)))
print(string.format(1/3), string.format(1/0))
print(pcall(string.char, "65"), string.char("6.5e1"))`},
	{name: "syntax error", args: []string{"syntax.lua"}},
	{name: "syntax error at the end of the file", args: []string{"unclosed.lua"}},
	{name: "a syntax error in stdin", args: []string{"-"}, stdin: "x = 1\nlocal s = 'abc\n"},
	{name: "a #! line is skipped but counted", args: []string{"shebang.lua"}},
	{name: "missing script", args: []string{"nofile.lua", "a"}},
	{name: "a directory as the script", args: []string{"."}},
	{name: "os.exit sets the exit status", args: []string{"exit.lua"}},
	{name: "os.exit from -e", args: []string{"-e", "os.exit(0)", "error.lua"}},

	// Options.
	{name: "unrecognized option", args: []string{"-x", "args.lua"},
		firstLine: `^(glua: unrecognized option '-x'|usage: glua .*)$`, shape: true,
		contains: "usage: glua [options] [script [args]]"},
	{name: "option with extra characters", args: []string{"-vx"},
		firstLine: `^(glua: unrecognized option '-vx'|usage: glua .*)$`, shape: true,
		contains: "usage: glua [options] [script [args]]"},
	{name: "-e without its argument", args: []string{"-e"},
		firstLine: `^(glua: '-e' needs argument|usage: glua .*)$`, shape: true,
		contains: "usage: glua [options] [script [args]]"},
	{name: "-v prints the version to stderr", args: []string{"-v"}, firstLine: banner},
	{name: "-v then -e", args: []string{"-v", "-e", "print('after')"},
		firstLine: banner},

	// -i: the script first, then statements from stdin, which is not a
	// terminal here; glua's banner has a line more than lua's.
	{name: "-i after a script reads statements from stdin", args: []string{"-i", "args.lua", "x"},
		stdin: "print(1)\n= 2, 3\nfor i = 1, 2 do\nprint(i) end\nerror('x')\nprint('after the error')\n", firstLine: banner, shape: true},
	{name: "-i continues an unfinished string", args: []string{"-i"}, stdin: "x = 'abc\nprint(1)\nprint(2)\n", firstLine: banner, shape: true},
	{name: "-e then -i", args: []string{"-e", "x = 5", "-i"}, stdin: "print(x)\n= x * 2\n", firstLine: banner, shape: true},
	{name: "an error in the script skips -i", args: []string{"-i", "error.lua"}, stdin: "print('not reached')\n", firstLine: banner, shape: true},

	// io.popen's command writes to the process's own output and error.
	{name: "a popen command's output and error are the process's", args: []string{"-e",
		`local p = io.popen("cat", "w") p:write("through cat\n") print(p:close()) ` +
			`local q = io.popen("echo to-stderr >&2; echo read") print(q:read("*a"), q:close()) print(io.popen("exit 3"):close())`}},
	{name: "a popen command reads the process's input", args: []string{"-e", `print(io.popen("head -c 5"):read("*a"))`}, stdin: "abcdefgh"},

	// os.exit's argument is read before anything closes.
	{name: "os.exit of a boolean is a bad argument", args: []string{"-e", "io.write('out ') os.exit(true)"}},
	{name: "os.exit of a numeric string", args: []string{"-e", "os.exit('4')"}},
	{name: "os.exit of a fraction", args: []string{"-e", "os.exit(2.7)"}},
}

// banner is the first line of -v and -i, glua's or lua5.1's.
const banner = `^(glua \d+\.\d+\.\d+ \(Lua 5\.1 via gopher-lua.*\)|Lua 5\.1\.\d+  Copyright .*)$`

var (
	luaName   = regexp.MustCompile(`\blua5\.1\b`)
	goFrame   = regexp.MustCompile(`(?m)^\t\[G\]:`)
	traceLine = "stack traceback:"
)

// normalise names both interpreters glua and gives Go frames lua's name
// for C frames.
func normalise(s string) string {
	return goFrame.ReplaceAllString(luaName.ReplaceAllString(s, "glua"), "\t[C]:")
}

func TestBehavesLikeLua51(t *testing.T) {
	lua := luatest.Lua51(t)
	for _, tc := range sideBySideCases {
		t.Run(tc.name, func(t *testing.T) {
			inv := invocation{dir: "testdata", args: tc.args, stdin: tc.stdin}
			want := inv.run(t, lua, "lua5.1")
			got := inv.glua(t)
			want.stdout, want.stderr = normalise(want.stdout), normalise(want.stderr)
			got.stderr = normalise(got.stderr)
			if err := compareRuns(tc, got, want); err != "" {
				t.Errorf("%s\nglua %q:\n%v\nlua5.1:\n%v", err, tc.args, got, want)
			}
		})
	}
}

// compareRuns says how got differs from want, or "".
func compareRuns(tc sideBySide, got, want result) string {
	if tc.gluaFails {
		if got.code != 1 || want.code != 0 {
			return "want glua to exit 1 where lua5.1 exits 0"
		}
	} else if got.code != want.code {
		return "exit status differs"
	}
	if got.stdout != want.stdout {
		return "stdout differs"
	}
	if tc.contains != "" && (!strings.Contains(got.stderr, tc.contains) || !strings.Contains(want.stderr, tc.contains)) {
		return "stderr lacks " + tc.contains
	}
	if tc.firstLine == "" && !tc.shape {
		if got.stderr != want.stderr {
			return "stderr differs"
		}
		return ""
	}
	gotFirst, gotRest, _ := strings.Cut(got.stderr, "\n")
	wantFirst, wantRest, _ := strings.Cut(want.stderr, "\n")
	if tc.firstLine != "" {
		re := regexp.MustCompile(tc.firstLine)
		if !re.MatchString(gotFirst) || !re.MatchString(wantFirst) {
			return "first line of stderr does not match " + tc.firstLine
		}
	} else if gotFirst != wantFirst {
		return "first line of stderr differs"
	}
	if !tc.shape {
		if gotRest != wantRest {
			return "stderr after the first line differs"
		}
		return ""
	}
	gotTrace, wantTrace := tracebackLines(gotRest), tracebackLines(wantRest)
	if (gotTrace == nil) != (wantTrace == nil) {
		return "only one has a traceback"
	}
	for _, lines := range [][]string{gotTrace, wantTrace} {
		for _, l := range lines {
			if !strings.HasPrefix(l, "\t") {
				return "traceback line not indented: " + l
			}
		}
	}
	return ""
}

// tracebackLines returns the lines after "stack traceback:", or nil when there
// is none.
func tracebackLines(stderr string) []string {
	_, after, ok := strings.Cut(stderr, traceLine+"\n")
	if !ok {
		return nil
	}
	return strings.Split(strings.TrimSuffix(after, "\n"), "\n")
}
