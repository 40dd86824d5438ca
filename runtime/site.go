package runtime

import (
	"fmt"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// site is where Lua code is allocating, kept unformatted because every
// allocation records one and few are ever printed.
type site struct {
	source string
	line   int
}

// goSite names, in reports, the arrays Go code allocated: they have no
// Lua line.
const goSite = "(allocated from Go)"

// ownLine marks a site that is no source line but what pool memory the
// runtime took for itself is for (workspaces.go): its source says what.
// The Lua line running when the memory was taken only happened to need
// it first (the first matrix product on a stream makes its cuBLAS
// workspace, which then lives as long as the stream), and naming the
// memory after that line would misattribute it.
const ownLine = -2

var (
	workspaceSite = site{source: "cuBLAS workspace", line: ownLine}
	scratchSite   = site{source: "reduction scratch", line: ownLine}
)

// own says s is memory the runtime took for itself, not an array's site.
func (s site) own() bool { return s.line == ownLine }

// label is the site as reports name it.
func (s site) label() string {
	if s.source == "" {
		return goSite
	}
	return s.String()
}

func (s site) String() string {
	switch {
	case s.source == "":
		return ""
	case s.own():
		return s.source
	}
	return fmt.Sprintf("%s:%d", s.source, s.line)
}

// callerSite is the innermost Lua function on the stack, if Lua is running.
//
// Every allocation records one for pool.report(), and gopher-lua's only
// way to it, GetStack, allocates a Debug each time: a seventh of an
// alloc+free from a Lua loop. So the call frames are read directly, at
// field offsets looked up by name when the package loads (frameFields);
// if gopher-lua's frames ever change shape, or a tail call makes the walk
// ambiguous, GetStack answers instead.
func (rt *Runtime) callerSite() site {
	if rt.L == nil {
		return site{}
	}
	if frameFields.ok {
		if s, ok := framesSite(rt.L); ok {
			return s
		}
	}
	return stackSite(rt.L)
}

// stackSite is callerSite through GetStack and GetInfo.
func stackSite(L *lua.LState) site {
	for level := 1; level < 8; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return site{}
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			return site{}
		}
		if dbg.What != "G" {
			return site{dbg.Source, dbg.CurrentLine}
		}
	}
	return site{}
}

// frameFields are the offsets of the fields callerSite reads: the
// LState's current call frame, and a frame's function, parent, program
// counter and tail-call count.
var frameFields = func() (f struct {
	ok                             bool
	current, fn, parent, pc, tailc uintptr
}) {
	cur, ok := reflect.TypeFor[lua.LState]().FieldByName("currentFrame")
	if !ok || cur.Type.Kind() != reflect.Pointer || cur.Type.Elem().Kind() != reflect.Struct {
		return f
	}
	frame := cur.Type.Elem()
	field := func(name string, want reflect.Type) (uintptr, bool) {
		sf, ok := frame.FieldByName(name)
		return sf.Offset, ok && sf.Type == want
	}
	var ok1, ok2, ok3, ok4 bool
	f.fn, ok1 = field("Fn", reflect.TypeFor[*lua.LFunction]())
	f.parent, ok2 = field("Parent", cur.Type)
	f.pc, ok3 = field("Pc", reflect.TypeFor[int]())
	f.tailc, ok4 = field("TailCall", reflect.TypeFor[int]())
	f.current, f.ok = cur.Offset, ok1 && ok2 && ok3 && ok4
	return f
}()

// framesSite walks the frames as GetStack and GetInfo("Sl") would: from
// the running (Go) function's caller outwards, the first frame that is not
// a Go function, or the bottom one. ok is false where the walk would need
// GetStack's handling of tail calls.
func framesSite(L *lua.LState) (site, bool) {
	ff := &frameFields
	at := func(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }
	frame := *(*unsafe.Pointer)(at(unsafe.Pointer(L), ff.current))
	for level := 1; level < 8; level++ {
		if frame == nil || *(*int)(at(frame, ff.tailc)) != 0 {
			return site{}, false
		}
		frame = *(*unsafe.Pointer)(at(frame, ff.parent))
		if frame == nil {
			return site{}, true
		}
		fn := *(**lua.LFunction)(at(frame, ff.fn))
		bottom := *(*unsafe.Pointer)(at(frame, ff.parent)) == nil
		if fn.IsG {
			if bottom {
				return site{"", -1}, true
			}
			continue
		}
		if *(*int)(at(frame, ff.tailc)) != 0 {
			return site{}, false
		}
		line := 0
		if pc := *(*int)(at(frame, ff.pc)); pc > 0 {
			line = fn.Proto.DbgSourcePositions[pc-1]
		}
		return site{fn.Proto.SourceName, line}, true
	}
	return site{}, true
}
