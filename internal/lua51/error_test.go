package lua51

import "testing"

func TestErrorWithNoArgumentIsNil(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "pcall(error)", src: `print(pcall(error))`, want: "false\tnil"},
		{name: "error() in a function",
			src:  `local function f() error() end print(pcall(f))`,
			want: "false\tnil"},
	})
}

func TestErrorAddsThePositionOfLuaFunctionsOnly(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "level 1 called by pcall, a C function", src: `print(pcall(error, "e"))`,
			want: "false\te"},
		{name: "level 2 called by pcall is the chunk", src: `print(pcall(error, "e", 2))`,
			want: "false\tstdin:1: e"},
		{name: "level 1 in a Lua function", src: "local function f() error(\"x\") end\nprint(pcall(f))",
			want: "false\tstdin:1: x"},
		{name: "level 2 is the caller",
			src:  "local function g() error(\"x\", 2) end\nlocal function h()\n g()\nend\nprint(pcall(h))",
			want: "false\tstdin:3: x"},
		{name: "level 2 called by pcall", src: `local function g() error("x", 2) end print(pcall(g))`,
			want: "false\tx"},
		{name: "level 0 adds nothing", src: `local function g() error("m", 0) end print(pcall(g))`,
			want: "false\tm"},
		{name: "a level past the stack adds nothing", src: `local function g() error("m", 50) end print(pcall(g))`,
			want: "false\tm"},
		{name: "a level a tail call took away adds nothing",
			src:  "local function t3() error(\"lvl2\", 2) end\nlocal function c3() return t3() end\nprint(pcall(c3))",
			want: "false\tlvl2"},
		{name: "a tail-called function still has its position",
			src:  "local function t() error(\"in t\") end\nprint(pcall(function() return t() end))",
			want: "false\tstdin:1: in t"},
		{name: "a number message becomes a string",
			src:  `local function f() error(12) end local ok, e = pcall(f) print(e, type(e)) ok, e = pcall(error, 12) print(e, type(e)) print(type(select(2, pcall(error, 12, 0))))`,
			want: "stdin:1: 12\tstring\n12\tstring\nnumber"},
		{name: "numbers are written as %.14g", src: `local function f() error(1/3) end print(pcall(f))`,
			want: "false\tstdin:1: 0.33333333333333"},
		{name: "a table message is left alone",
			src:  `local t = {} local function f() error(t, 1) end local ok, e = pcall(f) print(e == t)`,
			want: "true"},
		{name: "the level may be a numeric string", src: `print(pcall(error, "x", "2"))`,
			want: "false\tstdin:1: x"},
		{name: "a level that is not a number", src: `print((pcall(error, "x", {})))`,
			want: "false"},
	})
}
