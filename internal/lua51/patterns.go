package lua51

import (
	"strings"

	"github.com/yuin/gopher-lua/pm"

	lua "github.com/yuin/gopher-lua"
)

// atInit runs gopher-lua's string.find or string.match with the start
// position Lua 5.1 uses: negative counts from the end, and anything past
// the end is the end itself, where an empty match is still found. gopher-
// lua's find answers 1, 0 for an empty pattern whatever the start, so
// ("abc"):find("", 10) gave 1 0 (Lua 5.1: 4 3), and its match finds
// nothing past the end.
type atInit struct {
	fn    lua.LGFunction // gopher-lua's
	empty func(L *lua.LState, init int) int
	find  bool
}

func (a atInit) call(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	init := int64(1)
	if L.GetTop() >= 3 && L.Get(3) != lua.LNil {
		init = checkInt(L, 3)
	}
	l := int64(len(s))
	if init < 0 {
		init += l + 1
	}
	init--
	if init < 0 {
		init = 0
	} else if init > l {
		init = l
	}
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
	if ownMatcher(L, p) {
		return (&matcher{L: L, src: s, pat: p}).findAt(int(init), a.find)
	}
	L.Replace(3, lua.LNumber(init+1))
	n := a.fn(L)
	if n == 0 {
		// gopher-lua's match pushes nil when nothing matches but
		// returns no values, so print(s:match("x")) printed an empty
		// line and select("#", ...) was 0; Lua 5.1 returns nil.
		L.Push(lua.LNil)
		return 1
	}
	return n
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

// strGmatch is Lua 5.1's string.gmatch. gopher-lua's returns its iterator
// together with a state value that the iterator needs as its argument, so
// a for loop works but calling the iterator by hand (it()) fails; and it
// takes a leading "^" as an anchor, where gmatch matches it as a plain
// character.
func strGmatch(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	if ownMatcher(L, p) {
		L.Push(gmatchIterator(L, s, p))
		return 1
	}
	if len(p) > 0 && p[0] == '^' {
		p = "%" + p
	}
	matches, err := pm.Find(p, []byte(s), 0, -1)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	next := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		if next >= len(matches) {
			return 0
		}
		m := matches[next]
		next++
		if m.CaptureLength() == 2 {
			L.Push(lua.LString(s[m.Capture(0):m.Capture(1)]))
			return 1
		}
		for i := 2; i < m.CaptureLength(); i += 2 {
			if m.IsPosCapture(i) {
				L.Push(lua.LNumber(m.Capture(i)))
			} else {
				L.Push(lua.LString(s[m.Capture(i):m.Capture(i+1)]))
			}
		}
		return m.CaptureLength()/2 - 1
	}))
	return 1
}

// gsub is Lua 5.1's string.gsub over gopher-lua's. gopher-lua's replaces
// every match when the count is 0 or negative (Lua 5.1 replaces none),
// refuses a number as the replacement, takes a replacement value of true
// (or any other non-string) from a table or function as an empty string
// where Lua 5.1 raises "invalid replacement value (a boolean)", and
// writes a number value in Go's form.
type gsub struct {
	fn lua.LGFunction // gopher-lua's
}

func (g gsub) call(L *lua.LState) int {
	s := checkString(L, 1)
	p := checkString(L, 2)
	if ownMatcher(L, p) || escapesOtherThanDigits(L.Get(3)) || mayGrowBig(s, L.Get(3)) {
		return g.own(L, s, p)
	}
	switch repl := L.Get(3).(type) {
	case lua.LString:
	case lua.LNumber:
		L.Replace(3, lua.LString(numberString(repl)))
	case *lua.LTable:
		L.Replace(3, L.NewFunction(tableReplacement{repl}.call))
	case *lua.LFunction:
		L.Replace(3, L.NewFunction(functionReplacement{repl}.call))
	default:
		argError(L, 3, "gsub", "string/function/table expected")
	}
	if L.GetTop() >= 4 && L.Get(4) != lua.LNil {
		if n := checkInt(L, 4); n <= 0 {
			L.SetTop(0)
			L.Push(lua.LString(s))
			L.Push(lua.LNumber(0))
			return 2
		}
	}
	return g.fn(L)
}

// tableReplacement and functionReplacement stand for a table or function
// gsub was given, so that gopher-lua's gsub passes each value through
// replacement. Lua 5.1 has no such frames: tracebacks leave them out, and
// their errors count as gsub's (unseen.go).
type tableReplacement struct{ t *lua.LTable }

func (r tableReplacement) call(L *lua.LState) int {
	return replacement(L, L.GetTable(r.t, L.Get(1)))
}

type functionReplacement struct{ f *lua.LFunction }

func (r functionReplacement) call(L *lua.LState) int {
	n := L.GetTop()
	L.Push(r.f)
	for i := 1; i <= n; i++ {
		L.Push(L.Get(i))
	}
	L.Call(n, 1)
	return replacement(L, L.Get(-1))
}

// replacement is the value a table or function gave for a match, as Lua
// 5.1's add_value takes it: false or nil keeps the match, a string or a
// number (written as "%.14g") replaces it, anything else is an error.
func replacement(L *lua.LState, v lua.LValue) int {
	switch v := v.(type) {
	case lua.LString:
		L.Push(v)
	case lua.LNumber:
		L.Push(lua.LString(numberString(v)))
	default:
		if lua.LVAsBool(v) {
			L.RaiseError("invalid replacement value (a %s)", v.Type().String())
		}
		L.Push(lua.LFalse)
	}
	return 1
}

// own is gsub over this package's matcher, for the patterns gopher-lua's
// cannot match and the states that run under a context (ownMatcher).
func (g gsub) own(L *lua.LState, s, p string) int {
	repl := L.Get(3)
	switch r := repl.(type) {
	case lua.LString, *lua.LTable, *lua.LFunction:
	case lua.LNumber:
		repl = lua.LString(numberString(r))
	default:
		argError(L, 3, "gsub", "string/function/table expected")
	}
	max := int64(len(s) + 1)
	if L.GetTop() >= 4 && L.Get(4) != lua.LNil {
		max = checkInt(L, 4)
	}
	return gsubAll(L, s, p, repl, max)
}

// escapesOtherThanDigits says whether a replacement string has a '%' that
// is followed by neither a digit nor another '%', or ends in one: Lua 5.1
// writes the character after such a '%' ("%d" is "d"), gopher-lua's gsub
// the two as they are.
func escapesOtherThanDigits(repl lua.LValue) bool {
	r, ok := repl.(lua.LString)
	if !ok {
		return false
	}
	for i := 0; i < len(r); i++ {
		if r[i] != '%' {
			continue
		}
		i++
		if i == len(r) || (r[i] != '%' && (r[i] < '0' || r[i] > '9')) {
			return true
		}
	}
	return false
}
