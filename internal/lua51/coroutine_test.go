package lua51

import "testing"

// A coroutine yields from any Lua function called by a call instruction,
// a tail call of coroutine.yield included, and refuses to yield from a
// function an instruction called for a metamethod or a generic for's
// iterator, as Lua 5.1 does; before, both ended in Go's nil pointer error
// at the next resume.
func TestYieldsFromTailCallsAndMetamethodsAsLua51(t *testing.T) {
	resumeTwice := func(body string) string {
		return `local co = coroutine.create(function() ` + body + ` end)
print(coroutine.resume(co, 1)) print(pcall(coroutine.resume, co, "r", "s")) print(coroutine.status(co))`
	}
	refused := "false\tattempt to yield across metamethod/C-call boundary\ntrue\tfalse\tcannot resume dead coroutine\ndead"
	checkCases(t, []luaCase{
		{name: "return coroutine.yield(...)", src: resumeTwice(`return coroutine.yield("y")`),
			want: "true\ty\ntrue\ttrue\tr\ts\ndead"},
		{name: "a tail call that yields", src: resumeTwice(`local function f(x) return coroutine.yield(x) end return f("f")`),
			want: "true\tf\ntrue\ttrue\tr\ts\ndead"},
		{name: "a method in tail position", src: resumeTwice(`local o = {m = function(self) return coroutine.yield("m") end} return o:m()`),
			want: "true\tm\ntrue\ttrue\tr\ts\ndead"},
		{name: "__call, a plain call", src: resumeTwice(`local t = setmetatable({}, {__call = function(self, x) return coroutine.yield(x) end}) return t("c")`),
			want: "true\tc\ntrue\ttrue\tr\ts\ndead"},
		{name: "__index", src: resumeTwice(`local t = setmetatable({}, {__index = function(t, k) return coroutine.yield(k) end}) return t.foo`),
			want: refused},
		{name: "__add", src: resumeTwice(`local t = setmetatable({}, {__add = function() return coroutine.yield() end}) return t + 1`),
			want: refused},
		{name: "__newindex", src: resumeTwice(`local t = setmetatable({}, {__newindex = function() coroutine.yield() end}) t.x = 1`),
			want: refused},
		{name: "__lt and __concat", src: resumeTwice(`local t = setmetatable({}, {__lt = function() return coroutine.yield() end}) return t < t`),
			want: refused},
		{name: "a generic for's iterator", src: resumeTwice(`for k in function() return coroutine.yield("it") end do return k end`),
			want: refused},
		{name: "a tail call of a Go function keeps its results", src: `local function f() return select("#", nil, nil) end
local function g() return tostring(12), math.max(1, 5) end print(f(), g())`,
			want: "2\t12\t5"},
	})
}

func TestCoroutineFunctionsCheckArgumentsAsLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "create and wrap take Lua functions", src: `print(pcall(coroutine.create, print)) print(pcall(coroutine.wrap, 1)) print(pcall(coroutine.create))`,
			want: "false\tbad argument #1 to '?' (Lua function expected)\nfalse\tbad argument #1 to '?' (Lua function expected)\nfalse\tbad argument #1 to '?' (Lua function expected)"},
		{name: "resume and status take coroutines", src: `print(pcall(coroutine.resume, nil)) print(pcall(coroutine.status, {}))`,
			want: "false\tbad argument #1 to '?' (coroutine expected)\nfalse\tbad argument #1 to '?' (coroutine expected)"},
		{name: "string.dump of a Go function", src: `print(pcall(string.dump, print)) print(pcall(string.dump))`,
			want: "false\tunable to dump given function\nfalse\tbad argument #1 to '?' (function expected, got no value)"},
	})
}
