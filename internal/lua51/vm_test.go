package lua51

import (
	"math"
	"reflect"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestGopherLuaJumpTableIsKnown fails when a gopher-lua release changes
// what the arithmetic, concatenation and for-loop handlers rely on: the
// jump table's shape and the unexported fields they read. Without it they
// are not installed and Lua 5.1's arithmetic and messages are lost.
func TestGopherLuaJumpTableIsKnown(t *testing.T) {
	if !vmLayout.ok {
		t.Fatal("gopher-lua's registry, call frame or mainLoop fields have changed")
	}
	if !jumpTableKnown() {
		t.Fatal("gopher-lua's jump table does not have v1.1.2's shape")
	}
	if !vmInstalled() {
		t.Fatal("glua's arithmetic handlers are not installed")
	}
	for _, op := range []int{lua.OP_MOVE, lua.OP_GETTABLE, lua.OP_LT, lua.OP_FORLOOP} {
		if reflect.ValueOf(jumpTable[op]).Pointer() != reflect.ValueOf(gopherHandlers[op]).Pointer() {
			t.Errorf("opcode %d's handler was replaced", op)
		}
	}
}

// Operands come from locals so that no compiler folds the constants.
func TestArithmeticIsLua51s(t *testing.T) {
	checkCases(t, []luaCase{
		{"% is a - floor(a/b)*b", `local a, b, c, t, z = 2, 900, 3, 10, 0
print(a^b % c, 0.1 % (z + 0.01), a^255 % t)
print(-7 % c, 7 % -c, 5.5 % 2, -0.0 % 1)`, "0\t0\t0\n2\t-2\t1.5\t0"},
		{"the issue's lines as written", `print(2^2.5, 10^-2, 2^0.5, 1.1^100)
local x = 0; print(x * -1, 1/(x * -1), -x, 0/-1)`, "5.6568542494924\t0.01\t1.4142135623731\t13780.612339822\n-0\t-inf\t-0\t0"},
		{"^ is C's pow to the last bit", `local two, ten, e, b, n = 2, 10, 2.5, 1.1, 195
print(string.format("%.17g %.17g %.17g %.17g", two^e, ten^-2, two^0.5, b^100))
print(string.format("%.17g %.17g %.17g", math.pow(3, 0.1), n^7, 7^-n))`,
			"5.6568542494923806 0.01 1.4142135623730951 13780.612339822381\n1.1161231740339044 10721172396796876 1.6065054278227118e-165"},
		{"minus zero survives arithmetic", `local x, m = 0, -1
print(x * m, 1/(x * m), -x, x / m, 1/(-x), x * m + 0, x * m - 0)`, "-0\t-inf\t-0\t-0\t-inf\t0\t-0"},
		{"NaN keeps C's sign", `local five, z, m = 5, 0, -8
print(five % z, m^(1/3), -(z/z), z/z, math.pow(-2, 0.5))`, "-nan\t-nan\tnan\t-nan\t-nan"},
		{"numeric strings are converted before metamethods", `local s = "10"
print(s + 1, "0x10" * 2, " 3 " - 1, -"2", "1e2" / 4, "7" % "4", "2" ^ "3")
getmetatable("").__add = function() return "meta" end
print("1" + 1, pcall(function() return "a" + 1 end))`, "11\t32\t2\t-2\t25\t3\t8\n2\ttrue\tmeta"},
		{"arithmetic metamethods", `local mt = {__add = function(a, b) return "add" end, __unm = function(a) return "unm" end,
  __pow = function(a, b) return "pow" end, __mod = function(a, b) return "mod" end}
local t = setmetatable({}, mt)
print(t + 1, 1 + t, -t, t ^ 2, 3 % t)`, "add\tadd\tunm\tpow\tmod"},
		{".. writes numbers as %.14g", `local third, big, inf, z = 1/3, 1e15, 1/0, 0
print("" .. third, "" .. big, "" .. inf, "" .. 2^53, 1 .. "", -z * 1 .. "", z/z .. "", 1e100 .. "")
print(#("" .. third), 12 .. 34, "a" .. 1.5 .. "b")`,
			"0.33333333333333\t1e+15\tinf\t9.007199254741e+15\t1\t-0\t-nan\t1e+100\n16\t1234\ta1.5b"},
		{"math.fmod is C's fmod", `local a, b, z = -1/0, -3, 0
print(math.fmod(a, b), math.fmod(5, z), math.fmod(-7, 3), math.mod(-7, 3), math.fmod(z/z, 1), math.fmod(-(z/z), 1))`, "-nan\t-nan\t-1\t-1\t-nan\tnan"},
		{"# of a table is its border whatever __len says", `local t = setmetatable({1, 2}, {__len = function() return 9 end})
print(#t, #"abc", (pcall(function() local x = 5; return #x end)))`, "2\t3\tfalse"},
		{"__concat", `local t = setmetatable({}, {__concat = function(a, b) return "c" end})
print("a" .. t, t .. "b", "x" .. "y" .. t, 1 .. t .. 2)`, "c\tc\txc\t1c"},
		{"for converts string bounds", `local t = {}
for i = "10", "1", "-2" do t[#t + 1] = i end
for i = " 1 ", 2 do t[#t + 1] = i end
for i = 1, "0x3" do t[#t + 1] = i end
print(table.concat(t, " "))`, "10 8 6 4 2 1 2 1 2 3"},
	})
}

func TestRuntimeErrorsNameTheValueAsLua51Does(t *testing.T) {
	checkCases(t, []luaCase{
		{"call", `print(pcall(function() undefinedglobal() end))
print(pcall(function() local f = 1; f() end))
print(pcall(function() local o = {} o:m() end))
print(pcall(function() local t = {} t.k.f() end))
print(pcall(function() local t = {} t.f() end))
print(pcall(function() return ("x")() end))
print(pcall(function() local t = {} return t[1]() end))`,
			"false\tstdin:1: attempt to call global 'undefinedglobal' (a nil value)\n" +
				"false\tstdin:2: attempt to call local 'f' (a number value)\n" +
				"false\tstdin:3: attempt to call method 'm' (a nil value)\n" +
				"false\tstdin:4: attempt to index field 'k' (a nil value)\n" +
				"false\tstdin:5: attempt to call field 'f' (a nil value)\n" +
				"false\tstdin:6: attempt to call a string value\n" +
				"false\tstdin:7: attempt to call field '?' (a nil value)"},
		{"index", `print(pcall(function() local t; return t.x end))
print(pcall(function() local t = {k = 1} return t.k.z end))
print(pcall(function() return nothing.x end))
print(pcall(function() local s = "x"; s.y = 1 end))
local u
print(pcall(function() u.x = 1 end))
print(pcall(function() local t = setmetatable({}, {__index = 5}) return t.x end))`,
			"false\tstdin:1: attempt to index local 't' (a nil value)\n" +
				"false\tstdin:2: attempt to index field 'k' (a number value)\n" +
				"false\tstdin:3: attempt to index global 'nothing' (a nil value)\n" +
				"false\tstdin:4: attempt to index local 's' (a string value)\n" +
				"false\tstdin:6: attempt to index upvalue 'u' (a nil value)\n" +
				"false\tstdin:7: attempt to index a number value"},
		{"arithmetic", `local x = 1
print(pcall(function() local t = {} return t.n + 1 end))
print(pcall(function() return x + nil end))
print(pcall(function() local a = {} return 2 * a end))
print(pcall(function() return -{} end))
print(pcall(function() local s = "a"; return s - 1 end))
print(pcall(function() return x .. {} end))
local u = {}
print(pcall(function() return "a" .. u end))
print(pcall(function() return #nil end))`,
			"false\tstdin:2: attempt to perform arithmetic on field 'n' (a nil value)\n" +
				"false\tstdin:3: attempt to perform arithmetic on a nil value\n" +
				"false\tstdin:4: attempt to perform arithmetic on local 'a' (a table value)\n" +
				"false\tstdin:5: attempt to perform arithmetic on a table value\n" +
				"false\tstdin:6: attempt to perform arithmetic on local 's' (a string value)\n" +
				"false\tstdin:7: attempt to concatenate a table value\n" +
				"false\tstdin:9: attempt to concatenate upvalue 'u' (a table value)\n" +
				"false\tstdin:10: attempt to get length of a nil value"},
		{"compare", `print(pcall(function() return 1 < nil end))
print(pcall(function() return {} < {} end))
print(pcall(function() return {} <= {} end))
print(pcall(function() return "a" >= 1 end))`,
			"false\tstdin:1: attempt to compare number with nil\n" +
				"false\tstdin:2: attempt to compare two table values\n" +
				"false\tstdin:3: attempt to compare two table values\n" +
				"false\tstdin:4: attempt to compare number with string"},
		{"for", `print(pcall(function() for i = "a", 2 do end end))
print(pcall(function() for i = 1, {} do end end))
print(pcall(function() for i = 1, 2, nil do end end))
print(pcall(function() for k in nil do end end))`,
			"false\tstdin:1: 'for' initial value must be a number\n" +
				"false\tstdin:2: 'for' limit must be a number\n" +
				"false\tstdin:3: 'for' step must be a number\n" +
				"false\tstdin:4: attempt to call a nil value"},
		{"arguments", `print(pcall(function() local ins = table.insert; ins({}, 1, 2, 3) end))
print(pcall(function() return ("x"):rep({}) end))
print(pcall(function() return string.rep() end))
print(pcall(function() return math.floor("a") end))
print(pcall(string.rep))
print(pcall(function() return ("x").rep() end))`,
			"false\tstdin:1: wrong number of arguments to 'insert'\n" +
				"false\tstdin:2: bad argument #1 to 'rep' (number expected, got table)\n" +
				"false\tstdin:3: bad argument #1 to 'rep' (string expected, got no value)\n" +
				"false\tstdin:4: bad argument #1 to 'floor' (number expected, got string)\n" +
				"false\tbad argument #1 to '?' (string expected, got no value)\n" +
				"false\tstdin:6: bad argument #1 to 'rep' (string expected, got no value)"},
		{"in coroutines", `print(coroutine.resume(coroutine.create(function() local t; return t.x end)))
print(pcall(coroutine.wrap(function() return nope() end)))
local co = coroutine.create(function() coroutine.yield(1) local n; return n + 1 end)
print(coroutine.resume(co))
print(coroutine.resume(co))`,
			"false\tstdin:1: attempt to index local 't' (a nil value)\n" +
				"false\tstdin:2: attempt to call global 'nope' (a nil value)\n" +
				"true\t1\n" +
				"false\tstdin:3: attempt to perform arithmetic on local 'n' (a nil value)"},
		{"a script's own error keeps its words", `print(pcall(error, "attempt to call a non-function object"))
print(pcall(function() error("attempt to compare table with table") end))`,
			"false\tattempt to call a non-function object\n" +
				"false\tstdin:2: attempt to compare table with table"},
	})
}

// TestTopLevelErrorsAreWorded runs an error that no pcall catches, under
// PCall as glua's entry points do.
func TestTopLevelErrorsAreWorded(t *testing.T) {
	got := runGlua(t, "local t = {}\nprint(t.a.b)")
	if want := "error: stdin:2: attempt to index field 'a' (a nil value)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestArithIsWhatTheVMComputes: a compiler folding constants with Arith
// gets what the same operation on variables gives.
func TestArithIsWhatTheVMComputes(t *testing.T) {
	L := newState(t)
	for _, tc := range []struct {
		op   int
		a, b float64
		src  string
	}{
		{lua.OP_MOD, 0x1p900, 3, "return a % b"},
		{lua.OP_MOD, -7, 3, "return a % b"},
		{lua.OP_POW, 2, 2.5, "return a ^ b"},
		{lua.OP_POW, 1.1, 100, "return a ^ b"},
		{lua.OP_MUL, 0, -1, "return a * b"},
		{lua.OP_DIV, 1, 3, "return a / b"},
		{lua.OP_UNM, 0, 0, "return -a"},
		{lua.OP_ADD, 0.1, 0.2, "return a + b"},
		{lua.OP_SUB, 5, 5, "return a - b"},
	} {
		fn, err := L.LoadString("local a, b = ... " + tc.src)
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		L.Push(lua.LNumber(tc.a))
		L.Push(lua.LNumber(tc.b))
		if err := PCall(L, 2, 1, nil); err != nil {
			t.Fatal(err)
		}
		got := float64(L.Get(-1).(lua.LNumber))
		L.Pop(1)
		if want := Arith(tc.op, tc.a, tc.b); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%s with a=%v b=%v: VM %v, Arith %v", tc.src, tc.a, tc.b, got, want)
		}
	}
}

// A yield that takes more values than the resume passes gets nil for the
// rest, as in Lua 5.1; gopher-lua left Go's nil there, and the next
// instruction to read one failed with Go's nil-pointer message.
func TestAYieldGetsNilForValuesTheResumeDoesNotPass(t *testing.T) {
	checkCases(t, []luaCase{
		{"one value taken, none passed", `local co = coroutine.create(function(a) local c = coroutine.yield(a) return c == nil, type(c) end)
print(coroutine.resume(co, 7))
print(coroutine.resume(co))`, "true\t7\ntrue\ttrue\tnil"},
		{"three taken, one passed; all taken, none passed", `local co = coroutine.create(function()
  local a, b, c = coroutine.yield(); print(a, b, c)
  print(select('#', coroutine.yield())); return 1 end)
coroutine.resume(co); coroutine.resume(co, 1); print(coroutine.resume(co))`, "1\tnil\tnil\n0\ntrue\t1"},
		{"through coroutine.wrap", `local w = coroutine.wrap(function() local x, y = coroutine.yield(1); print(x, y); return "end" end)
print(w()); print(w("only"))`, "1\nonly\tnil\nend"},
	})
}

// string.byte clamps its range as Lua 5.1's does, and gsub's replacement
// string writes the character after a '%' that is not a digit.
func TestByteRangesAndReplacementEscapesAsLua51(t *testing.T) {
	checkCases(t, []luaCase{
		{"byte", `print(("abc"):byte(0, 5))
print(string.byte("abc", -10, 2))
print(string.byte("abc", 3, 1), string.byte("abc", "2"))`, "97\t98\t99\n97\t98\nnil\t98"},
		{"gsub escapes", `print(string.gsub("hello", "l", "%d%%%1"))
print(string.gsub("ab", "(a)", "[%1%x]"))`, "hed%ld%lo\t2\n[ax]b\t1"},
	})
}

// debug.traceback writes a line for an empty message, as Lua 5.1's does.
func TestTracebackWritesAnEmptyMessagesLine(t *testing.T) {
	checkCases(t, []luaCase{
		{"empty message", `local tb = debug.traceback("", 1)
print((tb:match("^(.-)stack traceback:")) == "\n", (debug.traceback("m"):match("^m\nstack traceback:")) ~= nil)`, "true\ttrue"},
	})
}
