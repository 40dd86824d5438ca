package lua51

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua keeps what PCall needs in unexported fields: the list of open
// upvalues, the flag that stops raiseError from closing all of them, and
// the call frames (error reads them too, to find tail calls). They are found once, by name and type, as
// runtime/site.go finds the frame fields. If any is missing or has changed
// type (a new gopher-lua release), layout.ok is false, PCall falls back to
// L.PCall, error to what GetStack says, and TestGopherLuaLayoutIsKnown
// fails so that the upgrade is noticed.
var layout = func() (l struct {
	ok bool
	// In LState: uvcache *Upvalue (the open upvalues, sorted by ascending
	// register index), hasErrorFunc bool, currentFrame *callFrame.
	uvcache, hasErrorFunc, currentFrame uintptr
	// In Upvalue: next *Upvalue, index int (an absolute register index).
	uvNext, uvIndex uintptr
	// In callFrame: Parent *callFrame, Fn *LFunction, TailCall int.
	parent, fn, tailCall uintptr
	// In Debug: frame *callFrame, what GetInfo reads; debugOK says it was
	// found, for debug.getinfo, getfenv and setfenv (levels.go).
	debugFrame uintptr
	debugOK    bool
}) {
	field := func(t reflect.Type, name string, want reflect.Type) (uintptr, bool) {
		sf, ok := t.FieldByName(name)
		return sf.Offset, ok && sf.Type == want
	}
	state := reflect.TypeFor[lua.LState]()
	upvalue := reflect.TypeFor[lua.Upvalue]()
	uvPtr := reflect.PointerTo(upvalue)

	cur, ok := state.FieldByName("currentFrame")
	if !ok || cur.Type.Kind() != reflect.Pointer || cur.Type.Elem().Kind() != reflect.Struct {
		return l
	}
	frame := cur.Type.Elem()
	var ok1, ok2, ok3, ok4, ok5, ok6, ok7 bool
	l.currentFrame = cur.Offset
	l.uvcache, ok1 = field(state, "uvcache", uvPtr)
	l.hasErrorFunc, ok2 = field(state, "hasErrorFunc", reflect.TypeFor[bool]())
	l.uvNext, ok3 = field(upvalue, "next", uvPtr)
	l.uvIndex, ok4 = field(upvalue, "index", reflect.TypeFor[int]())
	l.parent, ok5 = field(frame, "Parent", cur.Type)
	l.fn, ok6 = field(frame, "Fn", reflect.TypeFor[*lua.LFunction]())
	l.tailCall, ok7 = field(frame, "TailCall", reflect.TypeFor[int]())
	l.ok = ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7
	l.debugFrame, l.debugOK = field(reflect.TypeFor[lua.Debug](), "frame", cur.Type)
	l.debugOK = l.debugOK && l.ok
	return l
}()

func uvcache(L *lua.LState) **lua.Upvalue {
	return (**lua.Upvalue)(unsafe.Add(unsafe.Pointer(L), layout.uvcache))
}

func hasErrorFunc(L *lua.LState) *bool {
	return (*bool)(unsafe.Add(unsafe.Pointer(L), layout.hasErrorFunc))
}

func uvNext(uv *lua.Upvalue) **lua.Upvalue {
	return (**lua.Upvalue)(unsafe.Add(unsafe.Pointer(uv), layout.uvNext))
}

func uvIndex(uv *lua.Upvalue) int {
	return *(*int)(unsafe.Add(unsafe.Pointer(uv), layout.uvIndex))
}

// currentFrame is the address of L's current frame pointer. Frames are
// handled as opaque pointers: only their Parent, Fn and TailCall fields
// are read.
func currentFrame(L *lua.LState) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(L), layout.currentFrame))
}

func frameParent(frame unsafe.Pointer) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(frame, layout.parent))
}

func frameFn(frame unsafe.Pointer) *lua.LFunction {
	return *(**lua.LFunction)(unsafe.Add(frame, layout.fn))
}

func frameTailCalls(frame unsafe.Pointer) int {
	return *(*int)(unsafe.Add(frame, layout.tailCall))
}

// highestOpenUpvalue is the register index of the last open upvalue, or
// -1 when none is open.
func highestOpenUpvalue(L *lua.LState) int {
	mark := -1
	for uv := *uvcache(L); uv != nil; uv = *uvNext(uv) {
		mark = uvIndex(uv)
	}
	return mark
}

// closeUpvaluesAbove closes and unlinks every open upvalue whose register
// index is above mark, as gopher-lua's own closeUpvalues does on a return.
// The list is sorted, so they are its tail. With lost set, the registers
// have already been cleared and the upvalues are closed on nil instead of
// on whatever the slots now hold.
func closeUpvaluesAbove(L *lua.LState, mark int, lost bool) {
	link := uvcache(L)
	for *link != nil && uvIndex(*link) <= mark {
		link = uvNext(*link)
	}
	uv := *link
	*link = nil
	for uv != nil {
		next := *uvNext(uv)
		*uvNext(uv) = nil
		uv.Close()
		if lost {
			uv.SetValue(lua.LNil)
		}
		uv = next
	}
}
