package lua51

import "testing"

// Lua 5.1's library reads integer arguments as C ints or 64-bit integers
// cast from the number (number.go), so values past 2^31, NaN and the
// infinities have answers there, which glua gives.
func TestIntegerArgumentsAreReadAsLua51ReadsThem(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "string.rep counts in a C int", src: `print(string.rep("ab", 2^32 + 2), string.rep("ab", -2^32 + 3), string.rep("ab", 2^53), string.rep("x", 0/0), ("y"):rep(2^40 + 1))`,
			want: "abab\tababab\t\t\ty"},
		{name: "string.char", src: `print(string.char(2^32 + 72, 0/0, 1/0, -2^32 + 105):byte(1, -1))`,
			want: "72\t0\t0\t105"},
		{name: "string.sub and byte take 64-bit positions", src: `print(("abcdef"):sub(0/0), ("abcdef"):sub(2^63), ("abcdef"):sub(2^32), ("abcdef"):sub(2, 2^53), ("abcdef"):byte(-2^63, 2))`,
			want: "abcdef\tabcdef\t\tbcdef\t97\t98"},
		{name: "string.find's start is 64-bit, gsub's count a C int", src: `print(string.find("abcabc", "b", 2^32 + 2), string.find("abcabc", "b", 2^31), string.find("abcabc", "b", -2^63))
print(string.gsub("aaaa", "a", "b", 2^32 + 2)) print(string.gsub("aaaa", "a", "b", -2^31 - 1)) print(string.gsub("aaaa", "a", "b", 2^31))`,
			want: "nil\tnil\t2\t2\nbbaa\t2\nbbbb\t4\naaaa\t0"},
		{name: "select", src: `print(select(2^32 + 2, "a", "b", "c")) print(select(-2^32 + 3, "a", "b", "c"))
print(select("2", "a", "b"), select("#x", 1, 2)) print(pcall(select, 2^31, "a"))`,
			want: "b\tc\nc\nb\t2\nfalse\tbad argument #1 to '?' (index out of range)"},
		{name: "unpack", src: `print(unpack({1, 2, 3}, 2^32 + 2)) print(unpack({1, 2, 3}, 2^53)) print(unpack({1, 2, 3}, -2^32 + 3)) print(unpack({1, 2, 3}, 1, 2^32 + 2))`,
			want: "2\t3\nnil\t1\t2\t3\n3\n1\t2"},
		{name: "ipairs' iterator", src: `local f = ipairs({}) print(f({5, 6}, 2^32), f({5, 6}, 0/0), f({5, 6}, 2^32 + 1))`,
			want: "1\t1\t2\t6"},
		{name: "tonumber's base and error's level", src: `print(tonumber("10", 2^32 + 2), tonumber("z", -2^32 + 36)) print(pcall(error, "e", 2^32)) print(pcall(function() error("e", 2^32 + 1) end))`,
			want: "2\t35\nfalse\te\nfalse\tstdin:1: e"},
		{name: "math.ldexp, random and randomseed", src: `print(math.ldexp(1, 2^32 + 2), math.ldexp(1, 2^53), math.ldexp(3, -2^32 + 1))
print(math.random(2^32 + 1), math.random(2^32 + 7, 2^32 + 7))
math.randomseed(2^32 + 7) local a = math.random(1000) math.randomseed(7) print(a == math.random(1000))`,
			want: "4\t1\t6\n1\t7\ntrue"},
		{name: "table.insert at 2^32 + 2 and 2^53", src: `local t = {1, 2, 3} table.insert(t, 2^32 + 2, "x") print(table.concat(t, ","))
local t = {1, 2, 3} table.insert(t, 2^53, "x") print(t[0], t[1], t[4], #t)`,
			want: "1,x,2,3\nx\tnil\t3\t4"},
		{name: "table.insert far below the table moves only what it holds", src: `local t = {1, 2, 3, [-5] = "m", [-10^6 + 1] = "n"}
table.insert(t, -10^6, "x") print(t[-10^6], t[-10^6 + 1], t[-10^6 + 2], t[-5], t[-4], t[0], t[1], t[2], t[4], #t)`,
			want: "x\tnil\tn\tnil\tm\tnil\tnil\t1\t3\t4"},
		{name: "table.remove", src: `local t = {1, 2, 3} print(table.remove(t, 2^32 + 2), table.concat(t, ",")) print(select("#", table.remove(t, 2^53)))`,
			want: "2\t1,3\n0"},
		{name: "table.concat", src: `print(table.concat({1, 2, 3}, ",", 2^32 + 2), table.concat({1, 2, 3}, ",", 1, 2^32 + 2), table.concat({1, 2, 3}, ",", 2, 2^53))
print(pcall(table.concat, {1, 2, 3}, ",", 2^31))`,
			want: "2,3\t1,2\t\nfalse\tinvalid value (nil) at index -2147483648 in table for 'concat'"},
		{name: "getfenv and setfenv check their level", src: `print(pcall(getfenv, -1)) print(pcall(getfenv, 2^32 - 1)) print(pcall(getfenv, 2^32 + 50))
print(getfenv(2^32 + 1) == _G, pcall(setfenv, -1, {}))`,
			want: "false\tbad argument #1 to '?' (level must be non-negative)\nfalse\tbad argument #1 to '?' (level must be non-negative)\n" +
				"false\tbad argument #1 to '?' (invalid level)\ntrue\tfalse\tbad argument #1 to '?' (level must be non-negative)"},
		{name: "a negative step of collectgarbage ends the cycle", src: `print(collectgarbage("step", 2^31), collectgarbage("step", -1))`,
			want: "true\ttrue"},
	})
}
