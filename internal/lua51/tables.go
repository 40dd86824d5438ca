package lua51

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// tableConcat is Lua 5.1's table.concat(t [, sep [, i [, j]]]).
//
// gopher-lua's pushes every element, and a separator after each, onto the
// registry before joining them, so a table of more than about half the
// registry's size (5,120 slots by default) overflows it: with a fixed-size
// registry that panics the whole process. This one builds the result in Go
// and touches no registry slot. It also follows ltablib.c where gopher-lua
// does not: sep is checked before t; i and j are used as given, where
// gopher-lua clamps them into 1..#t (so concat({"a", "b"}, ",", 1, 5) is
// "a,b" there and fails at index 3 in Lua 5.1); numbers are written as
// "%.14g"; and a bad element gets Lua 5.1.5's message, positioned as
// luaL_error positions it.
func tableConcat(L *lua.LState) int {
	sep := ""
	if L.Get(2) != lua.LNil {
		sep = checkString(L, 2)
	}
	t := L.CheckTable(1)
	i := optInt(L, 3, 1)
	last := optInt(L, 4, length(t))
	var b strings.Builder
	next := BigString
	for n := 1; i <= last; i, n = i+1, n+1 {
		if n%checkEvery == 0 {
			checkContext(L)
		}
		v := getInt(t, i)
		s, ok := asString(v)
		if !ok {
			raise(L, fmt.Sprintf("invalid value (%s) at index %d in table for 'concat'", v.Type(), i))
		}
		growing(L, b.Len(), len(s)+len(sep), &next)
		b.WriteString(s)
		if i == last {
			break // i+1 could overflow when last is the largest int
		}
		b.WriteString(sep)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// tableForeach is Lua 5.1's table.foreach(t, f), which gopher-lua lacks:
// f(k, v) for each pair, in next's order, until f returns something other
// than nil, which foreach returns.
func tableForeach(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if r := call2(L, f, k, v); r != lua.LNil {
			L.Push(r)
			return 1
		}
	}
	return 0
}

// tableForeachi is Lua 5.1's table.foreachi(t, f), which gopher-lua lacks:
// f(i, t[i]) for i = 1, #t (#t taken once, before the first call), until f
// returns something other than nil, which foreachi returns.
func tableForeachi(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	n := length(t)
	for i := 1; i <= n; i++ {
		if r := call2(L, f, lua.LNumber(i), getInt(t, i)); r != lua.LNil {
			L.Push(r)
			return 1
		}
	}
	return 0
}

// call2 calls f with a and b and returns its first result.
func call2(L *lua.LState, f, a, b lua.LValue) lua.LValue {
	L.Push(f)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	r := L.Get(-1)
	L.Pop(1)
	return r
}

// tableSetn is Lua 5.1's table.setn, built without LUA_COMPAT_GETN as the
// reference interpreter is: it checks its table and fails. gopher-lua has
// no setn at all, so old code fails with "attempt to call a nil value"
// instead of saying why.
func tableSetn(L *lua.LState) int {
	L.CheckTable(1)
	raise(L, "'setn' is obsolete")
	return 0
}

// tableMaxn is Lua 5.1's table.maxn(t): the largest positive numeric key,
// integer or not, or 0. gopher-lua's looks only at the table's array part,
// so table.maxn{[1000] = true} is 0 there and 1000 in Lua 5.1.
func tableMaxn(L *lua.LState) int {
	t := L.CheckTable(1)
	maxKey := lua.LNumber(0)
	t.ForEach(func(k, _ lua.LValue) {
		if n, ok := k.(lua.LNumber); ok && n > maxKey {
			maxKey = n
		}
	})
	L.Push(maxKey)
	return 1
}
