package lua51

import "testing"

func TestTostringAndWriteFollowLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{name: "tostring of numbers", src: `local zero = 0 print(tostring(1/3), tostring(1e15), tostring(2^63), tostring(-zero), tostring(1e-5), tostring(12))`,
			want: "0.33333333333333\t1e+15\t9.2233720368548e+18\t-0\t1e-05\t12"},
		{name: "tostring of infinities", src: `print(tostring(1/0), tostring(-1/0), tostring(math.huge))`,
			want: "inf\t-inf\tinf"},
		{name: "__tostring's result is returned as it is", src: `print(type(tostring(setmetatable({}, {__tostring = function() return 42 end}))))`,
			want: "number"},
		{name: "other values", src: `print(tostring("s"), tostring(nil), tostring(false), tostring("1e15"))`,
			want: "s\tnil\tfalse\t1e15"},
		{name: "tostring needs an argument", src: `print((pcall(tostring)))`, want: "false"},
		{name: "file:write returns true and writes strings as they are", src: `
local f = io.tmpfile()
print(f:write("a", 1.5, "b"))
f:seek("set")
print(f:read("*a"))`, want: "true\na1.5b"},
		{name: "write refuses a table", src: `print((pcall(io.write, {})))`, want: "false"},
	})
}
