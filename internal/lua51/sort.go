package lua51

import (
	lua "github.com/yuin/gopher-lua"
)

// tableSort is Lua 5.1's table.sort(t [, comp]): ltablib.c's quicksort,
// step for step, so that elements that compare equal end in the order
// lua5.1 leaves them, an order function that is not one ("return true")
// ends in "invalid order function for sorting", and values that cannot be
// compared give lua5.1's message, with no position, as an error inside a
// C function has none. gopher-lua's sorted its slice of integer keys with
// Go's sort.Sort: ties came out in another order than lua5.1's, an invalid
// order function went unnoticed, and a list past the slice was sorted in
// part. It looks at the context every checkEvery comparisons.
func tableSort(L *lua.LState) int {
	t := L.CheckTable(1)
	s := &sorter{L: L, t: t}
	if v := L.Get(2); v != lua.LNil {
		s.fn = L.CheckFunction(2)
	}
	s.sort(1, length(t))
	return 0
}

type sorter struct {
	L        *lua.LState
	t        *lua.LTable
	fn       *lua.LFunction // the order function, or nil for <
	compared int
}

func (s *sorter) get(i int) lua.LValue    { return getInt(s.t, i) }
func (s *sorter) set(i int, v lua.LValue) { setInt(s.L, s.t, i, v) }

// less is sort_comp: the order function's answer, or lua_lessthan's.
func (s *sorter) less(a, b lua.LValue) bool {
	if s.compared++; s.compared%checkEvery == 0 {
		checkContext(s.L)
	}
	if s.fn != nil {
		return lua.LVAsBool(call2(s.L, s.fn, a, b))
	}
	return lessThan(s.L, a, b)
}

// lessThan is Lua 5.1's luaV_lessthan: numbers and strings by value, and
// anything else through an __lt both operands share; the error is
// luaG_ordererror's.
func lessThan(L *lua.LState, a, b lua.LValue) bool {
	switch x := a.(type) {
	case lua.LNumber:
		if y, ok := b.(lua.LNumber); ok {
			return x < y
		}
	case lua.LString:
		if y, ok := b.(lua.LString); ok {
			return x < y
		}
	}
	if a.Type() == b.Type() {
		if tm := L.GetMetaField(a, "__lt"); tm != lua.LNil && tm == L.GetMetaField(b, "__lt") {
			return lua.LVAsBool(call2(L, tm, a, b))
		}
		L.Error(lua.LString("attempt to compare two "+a.Type().String()+" values"), 0)
	}
	L.Error(lua.LString("attempt to compare "+a.Type().String()+" with "+b.Type().String()), 0)
	return false
}

// sort is auxsort, for the elements l..u.
func (s *sorter) sort(l, u int) {
	for l < u {
		// sort a[l], a[(l+u)/2] and a[u]
		if al, au := s.get(l), s.get(u); s.less(au, al) {
			s.set(l, au)
			s.set(u, al)
		}
		if u-l == 1 {
			break
		}
		i := (l + u) / 2
		if ai, al := s.get(i), s.get(l); s.less(ai, al) {
			s.set(i, al)
			s.set(l, ai)
		} else if au := s.get(u); s.less(au, ai) {
			s.set(i, au)
			s.set(u, ai)
		}
		if u-l == 2 {
			break
		}
		p := s.get(i) // the pivot, moved to u-1
		s.set(i, s.get(u-1))
		s.set(u-1, p)
		// a[l] <= p == a[u-1] <= a[u]: only l+1 .. u-2 are left
		j := u - 1
		i = l
		for {
			var ai, aj lua.LValue
			for {
				i++
				if ai = s.get(i); !s.less(ai, p) {
					break
				}
				if i > u {
					raise(s.L, "invalid order function for sorting")
				}
			}
			for {
				j--
				if aj = s.get(j); !s.less(p, aj) {
					break
				}
				if j < l {
					raise(s.L, "invalid order function for sorting")
				}
			}
			if j < i {
				break
			}
			s.set(i, aj)
			s.set(j, ai)
		}
		au1, ai := s.get(u-1), s.get(i)
		s.set(u-1, ai)
		s.set(i, au1)
		// a[l..i-1] <= a[i] == p <= a[i+1..u]: sort the smaller part by
		// recursion and go on with the larger one
		if i-l < u-i {
			j = l
			i = i - 1
			l = i + 2
		} else {
			j = i + 1
			i = u
			u = j - 2
		}
		s.sort(j, i)
	}
}
