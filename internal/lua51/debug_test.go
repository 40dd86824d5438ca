package lua51

import "testing"

func TestGetinfoGivesLua51sFields(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "a Go function is a C function", src: `
local a = debug.getinfo(print)
print(a.what, a.source, a.short_src, a.linedefined, a.lastlinedefined, a.currentline, a.func == print)`,
			want: "C\t=[C]\t[C]\t-1\t-1\t-1\ttrue"},
		{name: "short_src and lines", src: "local function f()\n return debug.getinfo(1, \"Sl\")\nend\nlocal b = f()\nprint(b.what, b.short_src, b.currentline, b.linedefined, b.lastlinedefined, b.func)",
			want: "Lua\tstdin\t2\t1\t3\tnil"},
		{name: "activelines", src: "local function f()\n local x = 1\n return x\nend\nlocal l = debug.getinfo(f, \"L\").activelines\nprint(l[1], l[2], l[3], l[4], l[5])",
			want: "nil\ttrue\ttrue\ttrue\tnil"},
		{name: "names", src: `
local function named() return debug.getinfo(1, "n") end
local d = debug.getinfo(1, "n")
print(d.name, d.namewhat, named().name)`,
			want: "nil\t\tnamed"},
		{name: "a level past the stack", src: `print(debug.getinfo(100))`, want: "nil"},
	})
}
