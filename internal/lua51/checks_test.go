package lua51

import "testing"

func TestTableInsertAndRemoveAsLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "insert at a position shifts up", src: `local t = {1,2,3} table.insert(t, 2, "x") print(table.concat(t, ","))`,
			want: "1,x,2,3"},
		{name: "insert past the end", src: `local t = {1,2,3} table.insert(t, 6, "x") print(t[6], t[5], t[4])`,
			want: "x\tnil\tnil"},
		{name: "insert at 0 and with a numeric string", src: `local t = {1,2,3} table.insert(t, 0, "x") print(t[0], t[1], t[2], t[4])
local t = {1,2,3} table.insert(t, "2", "y") print(table.concat(t, ","))`,
			want: "x\tnil\t1\t3\n1,y,2,3"},
		{name: "insert appends", src: `local t = {} table.insert(t, "a") table.insert(t, "b") print(table.concat(t, ","))`,
			want: "a,b"},
		{name: "insert with four or one arguments", src: `print(pcall(function() table.insert({}, 1, 2, 3) end))
print(pcall(function() table.insert({}) end))`,
			want: "false\tstdin:1: wrong number of arguments to 'insert'\nfalse\tstdin:2: wrong number of arguments to 'insert'"},
		{name: "remove returns and shifts", src: `local t = {1,2,3} print(table.remove(t, 1), table.concat(t, ","))
local t = {1,2,3} print(table.remove(t), table.concat(t, ","))`,
			want: "1\t2,3\n3\t1,2"},
		{name: "remove outside the table returns nothing", src: `print(select("#", table.remove({})), select("#", table.remove({}, 1)))
local t = {1,2,3} print(select("#", table.remove(t, 5)), select("#", table.remove(t, 0)), table.concat(t, ","))`,
			want: "0\t0\n0\t0\t1,2,3"},
	})
}

func TestBaseAndStringFunctionsRefuseWhatLua51Refuses(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "setmetatable takes tables only", src: `print(pcall(function() return setmetatable(1, {}) end))
print(pcall(function() return setmetatable("s", {}) end))
print(getmetatable(setmetatable({}, {__index = {a = 1}})).__index.a)`,
			want: "false\tstdin:1: bad argument #1 to 'setmetatable' (table expected, got number)\nfalse\tstdin:2: bad argument #1 to 'setmetatable' (table expected, got string)\n1"},
		{name: "setmetatable's metatable is nil or a table, given", src: `print(pcall(setmetatable, {}, 1)) print(pcall(setmetatable, {})) print(select("#", setmetatable({}, nil)))`,
			want: "false\tbad argument #2 to '?' (nil or table expected)\nfalse\tbad argument #2 to '?' (nil or table expected)\n1"},
		{name: "string.char refuses codes outside a byte", src: `print(pcall(function() return string.char(256) end))
print(pcall(function() return string.char(65, -1) end))
print(string.char(72, "105", 32.9):byte(1, -1))`,
			want: "false\tstdin:1: bad argument #1 to 'char' (invalid value)\nfalse\tstdin:2: bad argument #2 to 'char' (invalid value)\n72\t105\t32"},
		{name: "next refuses a key the table does not hold", src: `print(pcall(next, {}, "x"))
print(pcall(next, {a = 1}, "x"))
print(pcall(next, {1, 2}, 3))
print(next({1, 2}, 1))`,
			want: "false\tinvalid key to 'next'\nfalse\tinvalid key to 'next'\nfalse\tinvalid key to 'next'\n2\t2"},
		{name: "next goes on from keys cleared while traversing", src: `local t = {a = 1, b = 2, c = 3, 1, 2}
local k, n = next(t), 0
while k do t[k] = nil n = n + 1 k = next(t, k) end
print(n, next(t))`,
			want: "5\tnil"},
	})
}

// string.upper and string.lower change ASCII letters only, byte by byte,
// as C's toupper and tolower do in the "C" locale.
func TestUpperAndLowerAreTheCLocales(t *testing.T) {
	src := `local s = "ÄäBbßéÉ\1zZ\255" .. string.char(0xe1, 0xba, 0x9e)
print(s:upper(), s:lower(), #s:upper(), #s:lower(), string.upper(12), ("x"):rep(3):upper())`
	if got, want := runGlua(t, src), runLua51(t, src); got != want {
		t.Errorf("glua:\n%q\nlua5.1:\n%q", got, want)
	}
}
