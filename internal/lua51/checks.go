package lua51

import (
	"fmt"
	"math"
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// before runs check on a call's arguments, then gopher-lua's function:
// for the functions whose work is right but which accept arguments Lua
// 5.1 refuses.
type before struct {
	check func(L *lua.LState)
	fn    lua.LGFunction // gopher-lua's
}

func (b before) call(L *lua.LState) int {
	b.check(L)
	return b.fn(L)
}

// argError is luaL_argerror's message, with the function's name given
// (Lua 5.1 finds it from the call, and says '?' where it cannot).
func argError(L *lua.LState, arg int, fn, msg string) {
	raise(L, fmt.Sprintf("bad argument #%d to '%s' (%s)", arg, fn, msg))
}

// setmetatableArgs: gopher-lua's setmetatable sets the metatable of any
// value (setmetatable(1, {}) changes every number's); Lua 5.1's takes
// tables only, and its message for a metatable of another type says no
// "got".
func setmetatableArgs(L *lua.LState) {
	if _, ok := L.Get(1).(*lua.LTable); !ok {
		argError(L, 1, "setmetatable", "table expected, got "+typeName(L, 1))
	}
	switch L.Get(2).(type) {
	case *lua.LTable, *lua.LNilType:
		if L.GetTop() >= 2 {
			return // a missing one is not nil there
		}
	}
	argError(L, 2, "setmetatable", "nil or table expected")
}

// typeName is luaL_typename: "no value" past the arguments given.
func typeName(L *lua.LState, arg int) string {
	if arg > L.GetTop() {
		return "no value"
	}
	return L.Get(arg).Type().String()
}

// strUpper and strLower are Lua 5.1's string.upper and string.lower:
// C's toupper and tolower in the "C" locale, byte by byte, so only ASCII
// letters change. gopher-lua's were Go's, which change every Unicode
// letter ("ä" became "Ä", its bytes other bytes).
func strUpper(L *lua.LState) int { return mapBytes(L, 'a', 'z', -32) }

func strLower(L *lua.LState) int { return mapBytes(L, 'A', 'Z', 32) }

func mapBytes(L *lua.LState, lo, hi byte, delta int) int {
	s := []byte(checkString(L, 1))
	for i, c := range s {
		if c >= lo && c <= hi {
			s[i] = byte(int(c) + delta)
		}
	}
	L.Push(lua.LString(s))
	return 1
}

// strChar is Lua 5.1's string.char. gopher-lua's keeps the low byte of
// each code (string.char(256) is "\0") where Lua 5.1 refuses codes
// outside 0..255, and refuses numeric strings.
func strChar(L *lua.LState) int {
	b := make([]byte, L.GetTop())
	for i := range b {
		c := checkInt(L, i+1)
		if c < 0 || c > math.MaxUint8 {
			argError(L, i+1, "char", "invalid value")
		}
		b[i] = byte(c)
	}
	L.Push(lua.LString(b))
	return 1
}

// nextArgs: gopher-lua's next answers some entry for a key the table does
// not hold; Lua 5.1 raises "invalid key to 'next'". A key whose value was
// set to nil during a traversal is still valid in both: gopher-lua keeps
// it in its key list, which is read here by reflection (tableKeys), and
// an integer key inside the array part stays in place.
func nextArgs(L *lua.LState) {
	t := L.CheckTable(1)
	key := L.Get(2)
	if key == lua.LNil || t.RawGet(key) != lua.LNil || tableKnows(t, key) {
		return
	}
	// luaG_runerror in Lua 5.1's table code, raised inside a C function,
	// so without a position.
	L.Error(lua.LString("invalid key to 'next'"), 0)
}

// tableKnows says whether key has a place in t although its value is nil:
// an index of the array part, or a key in the hash part's list of keys.
// Where gopher-lua's fields are not as expected it says yes, so that next
// never refuses a key it used to take.
func tableKnows(t *lua.LTable, key lua.LValue) bool {
	v := reflect.ValueOf(t).Elem()
	array, k2i := v.FieldByName("array"), v.FieldByName("k2i")
	if !array.IsValid() || array.Kind() != reflect.Slice || !k2i.IsValid() ||
		k2i.Kind() != reflect.Map || k2i.Type().Key() != reflect.TypeFor[lua.LValue]() {
		return true
	}
	if n, ok := key.(lua.LNumber); ok && n == lua.LNumber(math.Trunc(float64(n))) && n >= 1 && float64(n) <= float64(array.Len()) {
		return true
	}
	if k2i.IsNil() {
		return false
	}
	return k2i.MapIndex(reflect.ValueOf(&key).Elem()).IsValid()
}

// tableInsert is Lua 5.1's table.insert. gopher-lua's ignores arguments
// past the third, where Lua 5.1 raises "wrong number of arguments to
// 'insert'", and reads the position as a Go int, so a position of 2^53
// moved every element below it one place up, for ever; Lua 5.1 reads it
// as a C int (0 there).
func tableInsert(L *lua.LState) int {
	t := L.CheckTable(1)
	e := length(t) + 1
	var pos int
	switch L.GetTop() {
	case 2:
		pos = e
	case 3:
		pos = checkInt(L, 2)
		e = max(e, pos)
		shiftUp(L, t, pos, e)
	default:
		raise(L, "wrong number of arguments to 'insert'")
	}
	setInt(L, t, pos, L.Get(L.GetTop()))
	return 0
}

// shiftUp does what Lua 5.1's table.insert does before it stores:
// t[i] = t[i-1] for i from e down to pos+1. A position far below the
// table's elements (down to -2^31) would take billions of steps over
// nils, so where the range is much longer than the table, only the
// integer keys it holds in the range move.
func shiftUp(L *lua.LState, t *lua.LTable, pos, e int) {
	if e-pos <= arrayLen(t)+1024 {
		for i := e; i > pos; i-- {
			setInt(L, t, i, getInt(t, i-1))
		}
		return
	}
	var keys []int
	var values []lua.LValue
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if i := int(n); ok && float64(i) == float64(n) && i >= pos && i <= e {
			keys, values = append(keys, i), append(values, v)
		}
	}
	// Every key above pos now holds its lower neighbour's value, nil
	// where the neighbour had none.
	for _, k := range keys {
		if k > pos {
			t.RawSetInt(k, lua.LNil)
		}
	}
	for i, k := range keys {
		if k < e {
			setInt(L, t, k+1, values[i])
		}
	}
}

// tableRemove is Lua 5.1's table.remove. gopher-lua's returns nil where
// there is nothing to remove (an empty table, a position past the end),
// where Lua 5.1 returns no value, so select('#', table.remove({})) is 0.
func tableRemove(L *lua.LState) int {
	t := L.CheckTable(1)
	e := length(t)
	pos := optInt(L, 2, e)
	if pos < 1 || pos > e {
		return 0
	}
	L.Push(getInt(t, pos))
	for ; pos < e; pos++ {
		t.RawSetInt(pos, getInt(t, pos+1))
	}
	t.RawSetInt(e, lua.LNil)
	return 1
}

// strByte is Lua 5.1's string.byte: positions count from the end when
// negative, a start below 1 is 1 and an end past the string its length,
// so string.byte(s, 0, 5) gives the first five bytes (gopher-lua's gives
// none).
func strByte(L *lua.LState) int {
	s := checkString(L, 1)
	i := posrelat(optInteger(L, 2, 1), len(s))
	j := posrelat(optInteger(L, 3, i), len(s))
	i = max(i, 1)
	j = min(j, int64(len(s)))
	if i > j {
		return 0
	}
	for k := i; k <= j; k++ {
		L.Push(lua.LNumber(s[k-1]))
	}
	return int(j - i + 1)
}

// strDump is string.dump, which glua does not have: its functions compile
// to gopher-lua's instructions, not Lua 5.1's bytecode. A Go function gets
// Lua 5.1's refusal of a C function; gopher-lua's message named itself.
func strDump(L *lua.LState) int {
	fn := L.CheckFunction(1)
	if fn.IsG {
		raise(L, "unable to dump given function")
	}
	raise(L, "unable to dump given function: glua compiles to its own instructions, not Lua 5.1's bytecode")
	return 0
}
