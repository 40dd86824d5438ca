package lua51

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// matcher is Lua 5.1's pattern matcher (lstrlib.c's), under string.find,
// match, gmatch and gsub. gopher-lua's (module gopher-lua/pm) has no %f,
// words malformed patterns its own way ("unexpected EOS") or accepts
// them, never looks at a context's deadline, and ran a loop of gmatch,
// find, match and gsub 15 times slower than lua5.1; this one is within
// 1.2 times of it.

// checkEvery is how many match steps pass between two looks at the
// context: often enough to stop within a millisecond, rarely enough to
// cost nothing measurable.
const checkEvery = 1 << 12

const (
	maxCaptures   = 32 // LUA_MAXCAPTURES
	capUnfinished = -1
	capPosition   = -2
)

type matcher struct {
	L        *lua.LState
	src, pat string
	level    int
	capture  [maxCaptures]struct{ init, len int }
	steps    int // calls of match, for checkEvery
	grown    int // the size of gsub's result at which to check it next (growing)
}

// step counts a match step and, every checkEvery of them, stops the match
// with the context's error if the state's context is done, as the VM
// stops a script at its next instruction.
func (m *matcher) step() {
	if m.steps++; m.steps%checkEvery == 0 {
		checkContext(m.L)
	}
}

// checkContext raises the context's error if L's context is done: what a
// long library call (matching, table.concat) does every checkEvery steps.
func checkContext(L *lua.LState) {
	if ctx := L.Context(); ctx != nil {
		select {
		case <-ctx.Done():
			L.RaiseError("%s", ctx.Err().Error())
		default:
		}
	}
}

// at is the pattern's byte at p, or 0 past its end, as C's NUL-terminated
// pattern reads there.
func (m *matcher) at(p int) byte {
	if p < len(m.pat) {
		return m.pat[p]
	}
	return 0
}

func (m *matcher) fail(msg string) { m.L.RaiseError("%s", msg) }

// classEnd is the index just past the single-character class at p.
func (m *matcher) classEnd(p int) int {
	c := m.at(p)
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			m.fail("malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if m.at(p) == '^' {
			p++
		}
		// The first character of a set is taken as it is, so "[]]" is a
		// set holding "]".
		for {
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' && p < len(m.pat) {
				p++
			}
			if m.at(p) == ']' {
				return p + 1
			}
		}
	}
	return p
}

// classMatches is C's ctype test for a class letter (%a, %D ...) in the C
// locale; any other letter stands for itself.
func classMatches(c, class byte) bool {
	var res bool
	switch class | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = c > 32 && c < 127 && !isAlpha(c) && !(c >= '0' && c <= '9')
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || (c >= '0' && c <= '9')
	case 'x':
		res = isHexDigit(c)
	case 'z':
		res = c == 0
	default:
		return class == c
	}
	if class >= 'A' && class <= 'Z' {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// setMatches says whether c is in the set [...] from p (its '[') to end
// (its ']').
func (m *matcher) setMatches(c byte, p, end int) bool {
	in := true
	p++
	if m.pat[p] == '^' {
		in = false
		p++
	}
	for ; p < end; p++ {
		switch {
		case m.pat[p] == '%' && p+1 < end:
			p++
			if classMatches(c, m.pat[p]) {
				return in
			}
		case m.at(p+1) == '-' && p+2 < end:
			if m.pat[p] <= c && c <= m.pat[p+2] {
				return in
			}
			p += 2
		case m.pat[p] == c:
			return in
		}
	}
	return !in
}

// single says whether byte s of the subject matches the class from p to ep.
func (m *matcher) single(s, p, ep int) bool {
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return classMatches(c, m.pat[p+1])
	case '[':
		return m.setMatches(c, p, ep-1)
	}
	return m.pat[p] == c
}

// match matches the pattern from p against the subject from s and
// returns where the match ends, or -1.
func (m *matcher) match(s, p int) int {
	m.step()
	for {
		if p >= len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if m.at(p+1) == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			switch c := m.at(p + 1); {
			case c == 'b':
				if s = m.balance(s, p+2); s == -1 {
					return -1
				}
				p += 4
				continue
			case c == 'f':
				p += 2
				if m.at(p) != '[' {
					m.fail("missing '[' after '%f' in pattern")
				}
				ep := m.classEnd(p)
				var prev, cur byte
				if s > 0 {
					prev = m.src[s-1]
				}
				if s < len(m.src) {
					cur = m.src[s]
				}
				if m.setMatches(prev, p, ep-1) || !m.setMatches(cur, p, ep-1) {
					return -1
				}
				p = ep
				continue
			case c >= '0' && c <= '9':
				if s = m.backReference(s, c); s == -1 {
					return -1
				}
				p += 2
				continue
			}
		}
		ep := m.classEnd(p)
		ok := m.single(s, p, ep)
		switch m.at(ep) {
		case '?':
			if ok {
				if r := m.match(s+1, ep+1); r != -1 {
					return r
				}
			}
			p = ep + 1
			continue
		case '*':
			return m.maxExpand(s, p, ep)
		case '+':
			if !ok {
				return -1
			}
			return m.maxExpand(s+1, p, ep)
		case '-':
			return m.minExpand(s, p, ep)
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.single(s+i, p, ep) {
		i++
	}
	for ; i >= 0; i-- {
		if r := m.match(s+i, ep+1); r != -1 {
			return r
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if r := m.match(s, ep+1); r != -1 {
			return r
		}
		if !m.single(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) balance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close := m.pat[p], m.pat[p+1]
	depth := 1
	for i := s + 1; i < len(m.src); i++ {
		if m.src[i] == close {
			if depth--; depth == 0 {
				return i + 1
			}
		} else if m.src[i] == open {
			depth++
		}
	}
	return -1
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level].init, m.capture[m.level].len = s, what
	m.level++
	r := m.match(s, p)
	if r == -1 {
		m.level--
	}
	return r
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	r := m.match(s, p)
	if r == -1 {
		m.capture[l].len = capUnfinished
	}
	return r
}

func (m *matcher) backReference(s int, c byte) int {
	l := int(c) - '1'
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	n := m.capture[l].len
	if n < 0 || len(m.src)-s < n {
		return -1
	}
	init := m.capture[l].init
	if m.src[init:init+n] != m.src[s:s+n] {
		return -1
	}
	return s + n
}

// captureValue is capture i of a match from s to e: the whole match where
// the pattern has no captures and i is 0.
func (m *matcher) captureValue(i, s, e int) lua.LValue {
	if i >= m.level {
		if i != 0 {
			m.fail("invalid capture index")
		}
		return lua.LString(m.src[s:e])
	}
	switch c := m.capture[i]; c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return lua.LNumber(c.init + 1)
	default:
		return lua.LString(m.src[c.init : c.init+c.len])
	}
	return lua.LNil
}

// pushCaptures pushes a match's captures, or the whole match where there
// are none and whole is set, and returns how many.
func (m *matcher) pushCaptures(s, e int, whole bool) int {
	n := m.level
	if n == 0 && whole {
		n = 1
	}
	for i := 0; i < n; i++ {
		m.L.Push(m.captureValue(i, s, e))
	}
	return n
}

// findAt is string.find (find set) or string.match from init, a
// position already clamped into 0..len(src).
func (m *matcher) findAt(init int, find bool) int {
	p := 0
	anchor := m.at(0) == '^'
	if anchor {
		p = 1
	}
	for s := init; s <= len(m.src); s++ {
		m.level = 0
		if e := m.match(s, p); e != -1 {
			if find {
				m.L.Push(lua.LNumber(s + 1))
				m.L.Push(lua.LNumber(e))
				return m.pushCaptures(-1, -1, false) + 2
			}
			return m.pushCaptures(s, e, true)
		}
		if anchor {
			break
		}
	}
	m.L.Push(lua.LNil)
	return 1
}

// gmatchIterator is gmatch's iterator over matcher.
func gmatchIterator(L *lua.LState, src, pat string) *lua.LFunction {
	pos := 0
	return L.NewFunction(func(L *lua.LState) int {
		m := &matcher{L: L, src: src, pat: pat}
		for s := pos; s <= len(src); s++ {
			m.level = 0
			if e := m.match(s, 0); e != -1 {
				pos = e
				if e == s {
					pos++ // an empty match: go on from the next byte
				}
				return m.pushCaptures(s, e, true)
			}
		}
		pos = len(src) + 1
		return 0
	})
}

// gsubAll is string.gsub over matcher, with at most max replacements.
func gsubAll(L *lua.LState, src, pat string, repl lua.LValue, max int64) int {
	m := &matcher{L: L, src: src, pat: pat}
	p := 0
	anchor := m.at(0) == '^'
	if anchor {
		p = 1
	}
	var b strings.Builder
	n := int64(0)
	s := 0
	for n < max {
		m.level = 0
		e := m.match(s, p)
		if e != -1 {
			n++
			m.addValue(&b, repl, s, e)
		}
		switch {
		case e != -1 && e > s:
			s = e
		case s < len(src):
			b.WriteByte(src[s])
			s++
		default:
			goto done
		}
		if anchor {
			break
		}
	}
done:
	b.WriteString(src[s:])
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// addValue writes the replacement for the match from s to e.
func (m *matcher) addValue(b *strings.Builder, repl lua.LValue, s, e int) {
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString:
		// Each escape writes at most the whole subject.
		growing(m.L, b.Len(), len(r)+strings.Count(string(r), "%")*len(m.src), &m.grown)
		for i := 0; i < len(r); i++ {
			if r[i] != '%' {
				b.WriteByte(r[i])
				continue
			}
			i++
			var c byte // a trailing '%' reads C's terminating NUL
			if i < len(r) {
				c = r[i]
			}
			switch {
			case c < '0' || c > '9':
				b.WriteByte(c)
			case c == '0':
				b.WriteString(m.src[s:e])
			default:
				str, _ := asString(m.captureValue(int(c-'1'), s, e))
				b.WriteString(str)
			}
		}
		return
	case *lua.LTable:
		v = m.L.GetTable(r, m.captureValue(0, s, e))
	case *lua.LFunction:
		m.L.Push(r)
		n := m.pushCaptures(s, e, true)
		m.L.Call(n, 1)
		v = m.L.Get(-1)
		m.L.Pop(1)
	}
	if !lua.LVAsBool(v) {
		b.WriteString(m.src[s:e])
		return
	}
	str, ok := asString(v)
	if !ok {
		m.fail("invalid replacement value (a " + v.Type().String() + ")")
	}
	growing(m.L, b.Len(), len(str), &m.grown)
	b.WriteString(str)
}
