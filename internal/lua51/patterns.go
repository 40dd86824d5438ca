package lua51

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// atInit is Lua 5.1's string.find or string.match, on matcher
// (matcher.go), with the start position Lua 5.1 uses: negative counts
// from the end, and anything past the end is the end itself, where an
// empty match is still found (("abc"):find("", 10) is 4 3).
type atInit struct {
	empty func(L *lua.LState, init int) int
	find  bool
}

func (a atInit) call(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	init := min(max(posrelat(optInteger(L, 3, 1), len(s))-1, 0), int64(len(s)))
	if p == "" {
		return a.empty(L, int(init))
	}
	// Lua 5.1's find searches plainly for a pattern without special
	// characters, so "a)" is found, not a malformed pattern.
	if a.find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(p, "^$*+?.([%-")) {
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(int(init) + i + 1))
			L.Push(lua.LNumber(int(init) + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	return (&matcher{L: L, src: s, pat: p}).findAt(int(init), a.find)
}

func emptyFind(L *lua.LState, init int) int {
	L.Push(lua.LNumber(init + 1))
	L.Push(lua.LNumber(init))
	return 2
}

func emptyMatch(L *lua.LState, _ int) int {
	L.Push(lua.LString(""))
	return 1
}

// strGmatch is Lua 5.1's string.gmatch: its iterator can be called by
// hand (it()), and a leading "^" is a plain character, not an anchor.
func strGmatch(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	L.Push(gmatchIterator(L, s, p))
	return 1
}

// strGsub is Lua 5.1's string.gsub, on matcher: a count of 0 or less
// replaces nothing, a number replacement is written as "%.14g", a table
// or function value of true is an error ("invalid replacement value"),
// and "%d" in a replacement string is "d".
func strGsub(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	repl := L.Get(3)
	switch r := repl.(type) {
	case lua.LString, *lua.LTable, *lua.LFunction:
	case lua.LNumber:
		repl = lua.LString(numberString(r))
	default:
		argError(L, 3, "gsub", "string/function/table expected")
	}
	return gsubAll(L, s, p, repl, int64(optInt(L, 4, len(s)+1)))
}
