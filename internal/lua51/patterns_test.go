package lua51

import "testing"

func TestPatternFunctionsAsLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "the gmatch iterator can be called by hand", src: `local it = ("a1b2"):gmatch("%d") print(it(), it(), it())`,
			want: "1\t2"},
		{name: "gmatch takes a leading ^ literally", src: `local o = {} for m in ("^a^b"):gmatch("^.") do o[#o+1] = m end print(table.concat(o, ","))
local n = 0 for m in ("ab"):gmatch("^a") do n = n + 1 end print(n)`,
			want: "^a,^b\n0"},
		{name: "gmatch captures", src: `local o = {} for a, b in ("k=v, x=y"):gmatch("(%w+)=(%w+)") do o[#o+1] = a .. b end print(table.concat(o, ";"))
for p in ("abc"):gmatch("()b") do print(p) end`,
			want: "kv;xy\n2"},
		{name: "gmatch empty matches", src: `local o = {} for m in ("abc"):gmatch("a*") do o[#o+1] = "[" .. m .. "]" end print(table.concat(o))
local o = {} for m in ("abc"):gmatch("x*") do o[#o+1] = "[" .. m .. "]" end print(table.concat(o))`,
			want: "[a][][][]\n[][][][]"},
		{name: "find an empty pattern from any start", src: `print(("abc"):find("", 10))
print(("abc"):find("", 4))
print(("abc"):find("", -1))
print(("abc"):find("", -10))
print(("abc"):find("", 10, true))
print(("abc"):find("", 2, true))`,
			want: "4\t3\n4\t3\n3\t2\n1\t0\n4\t3\n2\t1"},
		{name: "find from a start outside the string", src: `print(("abc"):find("c", -10))
print(("abc"):find("c", -1))
print(("abc"):find("b", 10))
print(("abc"):find("b", 10, true))
print(("abc"):find("x*", 10))
print(("abc"):find("()", 3))`,
			want: "3\t3\n3\t3\nnil\nnil\n4\t3\n3\t2\t3"},
		{name: "match from a start outside the string", src: `print(("abc"):match("", 10))
print(("abc"):match("x*$", 10))
print(("abc"):match("()", 2))
print(("abc"):match("c", -1))`,
			want: "\n\n2\nc"},
		{name: "match returns nil when nothing matches", src: `print(("abc"):match("x"))
print(select("#", ("abc"):match("[%]]")), ("a]b"):match("[%]]"))
print(select("#", string.match("abc", "(x)(y)")), string.match("abc", "b", 3))`,
			want: "nil\n1\t]\n1\tnil"},
		{name: "gsub with a count of 0 or less replaces nothing", src: `print(("xx"):gsub("x", "#", 0))
print(("xx"):gsub("x", "#", -1))
print(("xx"):gsub("x", "#", 1))
print(("xx"):gsub("x", "#", 1.5))`,
			want: "xx\t0\nxx\t0\n#x\t1\n#x\t1"},
		{name: "gsub replacement values", src: `print(("xx"):gsub("x", 7))
print(("xx"):gsub("x", {x = 1/3}))
print(("xx"):gsub("x", function() return 0.1 end))
print(("xx"):gsub("x", {x = false}))
print(("abc"):gsub("%w", function(c) if c == "b" then return nil end return c:upper() end))
print(("hello world"):gsub("(o)", "[%1]"))
print(("a,b"):gsub("(%w)", {a = "A"}))`,
			want: "77\t2\n0.333333333333330.33333333333333\t2\n0.10.1\t2\nxx\t2\nAbC\t3\nhell[o] w[o]rld\t2\nA,b\t2"},
		{name: "gsub refuses a replacement value that is not a string", src: `print(pcall(function() return ("xx"):gsub("x", {x = true}) end))
print(pcall(function() return ("xx"):gsub("x", function() return {} end) end))
print(pcall(function() return string.gsub("x", "x", true) end))`,
			want: "false\tstdin:1: invalid replacement value (a boolean)\nfalse\tstdin:2: invalid replacement value (a table)\nfalse\tstdin:3: bad argument #3 to 'gsub' (string/function/table expected)"},
	})
}
