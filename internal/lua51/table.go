package lua51

import (
	"math"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua keeps a table's integer keys from 1 to lua.MaxArrayIndex - 1
// (2^26 - 1) in a slice, and stores key k there by appending nils up to
// it: t[6e7] = 1 on an empty table appended 60 million nils, a gigabyte
// that growing by doubling took 3.7 GB of the process to build, where Lua
// 5.1 puts the key in its hash part. Keys from MaxArrayIndex on live in a
// map, where Len, RawGetInt and ipairs do not look, so # of a list of
// 2^26 + 7 elements was 2^26 - 1.
//
// The handlers and functions here keep both from going wrong silently:
// a store that would append more than paddingChecked nils first asks the
// Lua memory limit for them (growing them takes up to three times their
// size), so that it ends in "not enough memory", which pcall catches,
// rather than in the process being killed; and length, getInt and the
// functions that use them go on into the map past the slice.

// paddingChecked is the number of nils appended by one store from which
// the store is checked against the memory limit (1 MiB of slots).
const paddingChecked = 1 << 16

// slotBytes is the size of one of the slice's slots (an interface).
const slotBytes = 16

// tableArrayOffset is the offset of LTable's array []LValue, or 0 where
// gopher-lua's LTable has no such field (TestGopherLuaLayoutIsKnown).
var tableArrayOffset = func() uintptr {
	sf, ok := reflect.TypeFor[lua.LTable]().FieldByName("array")
	if !ok || sf.Type != reflect.TypeFor[[]lua.LValue]() {
		return 0
	}
	return sf.Offset
}()

// arrayLen is the length of t's slice of integer keys.
func arrayLen(t *lua.LTable) int {
	if tableArrayOffset == 0 {
		return t.Len()
	}
	return len(*(*[]lua.LValue)(unsafe.Add(unsafe.Pointer(t), tableArrayOffset)))
}

// checkPadding asks the memory limit for the nils a store of key into t
// would append, where they are many.
func checkPadding(L *lua.LState, t *lua.LTable, key lua.LValue) {
	k, ok := key.(lua.LNumber)
	if !ok || k < 1 || k >= lua.LNumber(lua.MaxArrayIndex) {
		return
	}
	if pad := int(k) - 1 - arrayLen(t); pad >= paddingChecked && lua.LNumber(int(k)) == k {
		grow(L, 3*slotBytes*pad)
	}
}

// setInt is t[k] = v, raw, with the padding checked.
func setInt(L *lua.LState, t *lua.LTable, k int, v lua.LValue) {
	if k-1-arrayLen(t) >= paddingChecked {
		checkPadding(L, t, lua.LNumber(k))
	}
	t.RawSetInt(k, v)
}

// getInt is t[k], raw, for any integer k: RawGetInt looks only in the
// slice.
func getInt(t *lua.LTable, k int) lua.LValue {
	if k >= 1 && k < lua.MaxArrayIndex {
		return t.RawGetInt(k)
	}
	return t.RawGet(lua.LNumber(k))
}

// length is # of t: gopher-lua's border of the slice, and where the slice
// is full up to MaxArrayIndex - 1, a border found in the map past it as
// Lua 5.1's unbound_search finds one, doubling and then halving.
func length(t *lua.LTable) int {
	n := t.Len()
	if n < lua.MaxArrayIndex-1 || getInt(t, n+1) == lua.LNil {
		return n
	}
	i, j := n, n+1
	for getInt(t, j) != lua.LNil {
		i = j
		if j > math.MaxInt32/2 {
			// a table made to defeat the search: count on by ones,
			// as Lua 5.1 does
			for i = 1; getInt(t, i) != lua.LNil; i++ {
			}
			return i - 1
		}
		j *= 2
	}
	for j-i > 1 {
		m := (i + j) / 2
		if getInt(t, m) == lua.LNil {
			j = m
		} else {
			i = m
		}
	}
	return i
}

// opSettable is gopher-lua's OP_SETTABLE with the padding checked first.
func opSettable(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int {
	rg, cf := registryOf(L), *currentFrame(L)
	if t, ok := registers(rg)[frameBase(cf)+int(inst>>18)&0xff].(*lua.LTable); ok {
		checkPadding(L, t, rk(rg, cf, int(inst&0x1ff)))
	}
	return gopherHandlers[lua.OP_SETTABLE](L, inst, baseframe)
}

// rawsetPadding checks rawset's padding, before gopher-lua's rawset.
func rawsetPadding(L *lua.LState) {
	if t, ok := L.Get(1).(*lua.LTable); ok {
		checkPadding(L, t, L.Get(2))
	}
}

// tableGetn is Lua 5.1's table.getn(t), which is #t.
func tableGetn(L *lua.LState) int {
	L.Push(lua.LNumber(length(L.CheckTable(1))))
	return 1
}
