// Package luaheap walks everything a gopher-lua state can reach, as Lua's
// own collector marks it: the registry and globals, every reachable
// thread's stack, functions' environments and upvalues, tables' keys,
// values and metatables, userdata's metatables and environments, and the
// metatables of the built-in types.
//
// glua's runtime uses the walk to find the arrays a script no longer
// refers to without waiting for Go's collector, which cannot see that an
// array holds device memory. A walk that meets a value whose contents it
// cannot see (a channel, or a userdata the caller does not know) says so
// instead of guessing, and the caller falls back to Go's collector.
package luaheap

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Walker walks a state; keep one and reuse it, so that its set of seen
// objects and its work list are allocated once.
type Walker struct {
	// Userdata is called once for each userdata reached. It returns false
	// when it cannot tell what the userdata's Go value refers to, which
	// ends the walk as incomplete; a value that holds Lua values of its own
	// hands them to Add.
	Userdata func(ud *lua.LUserData) bool

	seen  map[lua.LValue]struct{}
	work  []lua.LValue
	env   *lua.LTable // the environment last added, which most functions share
	whole bool
}

// Add adds v to what the walk visits.
func (w *Walker) Add(v lua.LValue) {
	switch x := v.(type) {
	case *lua.LTable:
		if x == nil || x == w.env {
			return
		}
	case *lua.LFunction:
		if x == nil {
			return
		}
		if x.Proto == nil && len(x.Upvalues) == 0 {
			// A Go function without upvalues leads only to its
			// environment: no need to remember having seen it.
			w.Add(x.Env)
			return
		}
	case *lua.LUserData:
		if x == nil {
			return
		}
	case *lua.LState:
		if x == nil {
			return
		}
	case lua.LChannel:
		// Values in flight in a channel cannot be seen.
		w.whole = false
		return
	default:
		return // nil, booleans, numbers, strings
	}
	if _, ok := w.seen[v]; ok {
		return
	}
	w.seen[v] = struct{}{}
	w.work = append(w.work, v)
}

// Walk visits everything L's global state can reach. It reports whether
// the walk was complete: false when the layout of gopher-lua's state is
// not the one this package knows, when a channel was reached, or when
// Userdata returned false.
func (w *Walker) Walk(L *lua.LState) bool {
	if !layout.ok {
		return false
	}
	if w.seen == nil {
		w.seen = make(map[lua.LValue]struct{})
	}
	clear(w.seen)
	w.work, w.env, w.whole = w.work[:0], nil, true
	g := L.G
	w.Add(g.Registry)
	w.Add(g.Global)
	w.env = g.Global
	w.Add(g.MainThread)
	w.Add(g.CurrentThread)
	w.Add(L)
	for _, mt := range *builtinMetatables(g) {
		w.Add(mt)
	}
	// What the walk saw must not outlive it: the Go collector would
	// count the dropped objects in the set and the list as reachable.
	defer func() {
		clear(w.seen)
		clear(w.work[:cap(w.work)])
		w.work = w.work[:0]
	}()
	for len(w.work) > 0 && w.whole {
		v := w.work[len(w.work)-1]
		w.work = w.work[:len(w.work)-1]
		switch x := v.(type) {
		case *lua.LTable:
			w.table(x)
		case *lua.LFunction:
			w.Add(x.Env)
			for _, uv := range x.Upvalues {
				w.Add(uv.Value())
			}
		case *lua.LUserData:
			if !w.Userdata(x) {
				w.whole = false
			}
			w.Add(x.Metatable)
			w.Add(x.Env)
		case *lua.LState:
			w.thread(x)
		}
	}
	return w.whole
}

// table adds a table's keys, values and metatable. It reads the table's
// parts itself: ForEach makes an interface of every string key, which was
// most of a walk's time, and a string key refers to nothing.
func (w *Walker) table(t *lua.LTable) {
	for _, v := range *tableArray(t) {
		w.Add(v)
	}
	for _, v := range *tableStrdict(t) {
		w.Add(v)
	}
	for k, v := range *tableDict(t) {
		if v != lua.LNil {
			w.Add(k)
			w.Add(v)
		}
	}
	w.Add(t.Metatable)
}

// thread adds what a thread holds: its environment, the thread that
// resumed it, its call frames' functions and every stack slot in use.
func (w *Walker) thread(L *lua.LState) {
	w.Add(L.Env)
	w.Add(L.Parent)
	stack, top := registry(L)
	// A Lua frame owns registers up to its function's register count
	// whatever the top says; the slots above are free, stale at most.
	for f := currentFrame(L); f != nil; f = frameParent(f) {
		fn := frameFn(f)
		w.Add(fn)
		if fn != nil && fn.Proto != nil {
			top = max(top, frameLocalBase(f)+int(fn.Proto.NumUsedRegisters))
		}
	}
	for _, v := range stack[:min(top, len(stack))] {
		w.Add(v)
	}
}

// gopher-lua keeps a thread's stack, its call frames and the built-in
// types' metatables in unexported fields. They are found once, by name and
// type, as internal/lua51 finds the fields it needs; if any is missing or
// has changed type (a new gopher-lua release), layout.ok is false, every
// walk reports itself incomplete, and TestLayoutIsKnown fails.
var layout = func() (l struct {
	ok bool
	// In LState: reg *registry, currentFrame *callFrame. In registry:
	// array []LValue, top int. In callFrame: Parent *callFrame, Fn
	// *LFunction, LocalBase int. In Global: builtinMts map[int]LValue. In
	// LTable: array []LValue, dict map[LValue]LValue, strdict
	// map[string]LValue.
	reg, array, top, currentFrame, parent, fn, localBase, builtinMts uintptr
	tabArray, tabDict, tabStrdict                                    uintptr
}) {
	field := func(t reflect.Type, name string, want reflect.Type) (uintptr, bool) {
		sf, ok := t.FieldByName(name)
		return sf.Offset, ok && (want == nil || sf.Type == want)
	}
	state := reflect.TypeFor[lua.LState]()
	reg, ok1 := state.FieldByName("reg")
	cur, ok2 := state.FieldByName("currentFrame")
	if !ok1 || !ok2 || reg.Type.Kind() != reflect.Pointer || cur.Type.Kind() != reflect.Pointer ||
		reg.Type.Elem().Kind() != reflect.Struct || cur.Type.Elem().Kind() != reflect.Struct {
		return l
	}
	l.reg, l.currentFrame = reg.Offset, cur.Offset
	var ok [9]bool
	l.array, ok[0] = field(reg.Type.Elem(), "array", reflect.TypeFor[[]lua.LValue]())
	l.top, ok[1] = field(reg.Type.Elem(), "top", reflect.TypeFor[int]())
	l.parent, ok[2] = field(cur.Type.Elem(), "Parent", cur.Type)
	l.fn, ok[3] = field(cur.Type.Elem(), "Fn", reflect.TypeFor[*lua.LFunction]())
	l.localBase, ok[4] = field(cur.Type.Elem(), "LocalBase", reflect.TypeFor[int]())
	l.builtinMts, ok[5] = field(reflect.TypeFor[lua.Global](), "builtinMts", reflect.TypeFor[map[int]lua.LValue]())
	table := reflect.TypeFor[lua.LTable]()
	l.tabArray, ok[6] = field(table, "array", reflect.TypeFor[[]lua.LValue]())
	l.tabDict, ok[7] = field(table, "dict", reflect.TypeFor[map[lua.LValue]lua.LValue]())
	l.tabStrdict, ok[8] = field(table, "strdict", reflect.TypeFor[map[string]lua.LValue]())
	l.ok = ok == [9]bool{true, true, true, true, true, true, true, true, true}
	return l
}()

func registry(L *lua.LState) ([]lua.LValue, int) {
	reg := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), layout.reg))
	if reg == nil {
		return nil, 0
	}
	return *(*[]lua.LValue)(unsafe.Add(reg, layout.array)), *(*int)(unsafe.Add(reg, layout.top))
}

func currentFrame(L *lua.LState) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), layout.currentFrame))
}

func frameParent(f unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(f, layout.parent))
}

func frameFn(f unsafe.Pointer) *lua.LFunction {
	return *(**lua.LFunction)(unsafe.Add(f, layout.fn))
}

func frameLocalBase(f unsafe.Pointer) int {
	return *(*int)(unsafe.Add(f, layout.localBase))
}

func builtinMetatables(g *lua.Global) *map[int]lua.LValue {
	return (*map[int]lua.LValue)(unsafe.Add(unsafe.Pointer(g), layout.builtinMts))
}

func tableArray(t *lua.LTable) *[]lua.LValue {
	return (*[]lua.LValue)(unsafe.Add(unsafe.Pointer(t), layout.tabArray))
}

func tableDict(t *lua.LTable) *map[lua.LValue]lua.LValue {
	return (*map[lua.LValue]lua.LValue)(unsafe.Add(unsafe.Pointer(t), layout.tabDict))
}

func tableStrdict(t *lua.LTable) *map[string]lua.LValue {
	return (*map[string]lua.LValue)(unsafe.Add(unsafe.Pointer(t), layout.tabStrdict))
}
