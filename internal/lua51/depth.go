package lua51

import (
	"reflect"
	"sync"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's growing call stack (MinimizeStackMemory, which glua uses)
// never reports itself full: the call that passes its bound panics inside
// the push, after the caller's position is lost, and leaves no frame free
// for a message handler. Lua 5.1 raises "stack overflow" from the call
// instruction, as an error of the calling function (so with its position),
// and still has room to run the handler (xpcall(f, debug.traceback) gets
// the traceback). opCall does the same: before gopher-lua's call
// instruction pushes a frame past Options.CallStackSize ([lua] call_depth),
// it raises the error itself, and it gives the stack handlerFrames more
// frames of room, which only a message handler may use. Calls that do not
// go through the instruction (metamethods, a Go function calling Lua) are
// still bounded by gopher-lua's panic, which PCall recovers (guard.go).

// handlerFrames is the room past the bound that a message handler has for
// its own calls, as LUAI_MAXCCALLS bounds the C calls of Lua 5.1's.
const handlerFrames = 200

const callOverflowMessage = "stack overflow (calls nested deeper than [lua] call_depth allows)"

var gopherCallInstruction = gopherHandlers[lua.OP_CALL]

func opCall(L *lua.LState, inst uint32, baseframe unsafe.Pointer) int {
	if frameIndex(*currentFrame(L)) >= L.Options.CallStackSize-1 {
		checkCallDepth(L)
	}
	r := gopherCallInstruction(L, inst, baseframe)
	if r == 0 && activeHooks.Load() != 0 {
		return enterHook(L, baseframe)
	}
	return r
}

func frameIndex(cf unsafe.Pointer) int {
	return *(*int)(unsafe.Add(cf, guardLayout.frameIdx))
}

// checkCallDepth raises the overflow for a call that would nest deeper
// than the bound, unless a message handler is running: its calls may use
// the room past the bound.
func checkCallDepth(L *lua.LState) {
	if !growingStackLayout.ok || handlingError(L) {
		return
	}
	stack := callStack(L).Elem()
	if stack.Type() != growingStackLayout.typ {
		// A fixed stack reports itself full, and gopher-lua raises the
		// overflow with its position itself.
		return
	}
	segments := (*[]unsafe.Pointer)(unsafe.Add(stack.UnsafePointer(), growingStackLayout.segments))
	want := (L.Options.CallStackSize + handlerFrames + framesPerSegment - 1) / framesPerSegment
	if len(*segments) < want && want <= maxSegments {
		grown := make([]unsafe.Pointer, want)
		copy(grown, *segments)
		*segments = grown
	}
	L.RaiseError("%s", callOverflowMessage)
}

// framesPerSegment and maxSegments are gopher-lua's FramesPerSegment and
// the number of segments its uint16 segment index can reach.
const (
	framesPerSegment = lua.FramesPerSegment
	maxSegments      = 1 << 16
)

// growingStackLayout is what checkCallDepth needs of gopher-lua's
// *autoGrowingCallFrameStack: its type and the offset of its segments, a
// slice of pointers to segments that is as long as the stack may grow.
var growingStackLayout = func() (l struct {
	ok       bool
	typ      reflect.Type
	segments uintptr
}) {
	if !guardLayout.ok || !layout.ok {
		return l
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true, MinimizeStackMemory: true, CallStackSize: 8})
	defer L.Close()
	t := callStack(L).Elem().Type()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return l
	}
	seg, ok := t.Elem().FieldByName("segments")
	if !ok || seg.Type.Kind() != reflect.Slice || seg.Type.Elem().Kind() != reflect.Pointer {
		return l
	}
	l.ok, l.typ, l.segments = true, t, seg.Offset
	return l
}()

// handlers counts, for each state, the message handlers running in it.
var handlers = struct {
	sync.Mutex
	running map[*lua.LState]int
}{running: map[*lua.LState]int{}}

func enterHandler(L *lua.LState) {
	handlers.Lock()
	handlers.running[L]++
	handlers.Unlock()
}

func leaveHandler(L *lua.LState) {
	handlers.Lock()
	if handlers.running[L]--; handlers.running[L] <= 0 {
		delete(handlers.running, L)
	}
	handlers.Unlock()
}

func handlingError(L *lua.LState) bool {
	handlers.Lock()
	defer handlers.Unlock()
	return handlers.running[L] > 0
}
