package lua51

import (
	"reflect"
	"strings"
	"sync"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's L.RaiseError, which its library functions raise errors
// with, puts in front of the message the position of the nearest Lua
// function on the stack, past any Go ones. Lua 5.1's luaL_error puts that
// of the running function's caller, and none when the caller is a C
// function: pcall(assert, false) gives "assertion failed!" there,
// "stdin:1: assertion failed!" in gopher-lua. callerPosition takes the
// position back off where Lua 5.1 has none, for the functions of Lua's
// standard library (gopher-lua's and this package's replacements). A
// host's own functions keep it: glua's modules have no Lua 5.1 to follow,
// and their errors name the script's line, pcall or not.
//
// Some Go functions word their errors as Lua 5.1 does already, and keep
// them: error (error("e", 2) from pcall has the position of pcall's caller,
// rightly), assert, and the function coroutine.wrap returns (the
// coroutine's message has its own position).

// exactPositions are the code pointers of the Go functions that put Lua
// 5.1's position on their errors themselves.
var exactPositions = sync.OnceValue(func() map[uintptr]bool {
	return codePointers(baseError, baseAssert, wrapped{}.call)
})

// wrapsCoroutine says whether fn is a function coroutine.wrap returned: a
// Go closure over its coroutine, as gopher-lua's are and wrapped's are
// made. A host may have put its own Go function around wrapped.call (glua's
// runtime does, to pass contexts on), so the closure is known by its
// upvalue.
func wrapsCoroutine(fn *lua.LFunction) bool {
	if !fn.IsG || len(fn.Upvalues) != 1 {
		return false
	}
	_, ok := fn.Upvalues[0].Value().(*lua.LState)
	return ok
}

// standardLibrary are the code pointers of the Go functions of Lua's
// standard library as Open leaves it, taken from a scratch state: code
// pointers are the same in every state.
var standardLibrary = sync.OnceValue(func() map[uintptr]bool {
	L := lua.NewState()
	defer L.Close()
	openLibrary(L)
	m := map[uintptr]bool{}
	add := func(t *lua.LTable) {
		if t == nil {
			return
		}
		t.ForEach(func(_, v lua.LValue) {
			if p, ok := goFunc(v); ok {
				m[p] = true
			}
		})
	}
	for _, lib := range []string{"", "string", "table", "math", "io", "os", "coroutine", "debug", "package", fileMethods} {
		add(library(L, lib))
	}
	return m
})

// openLibrary is Open, called through a variable: Open's replacements
// reword errors through callerPosition, which needs Open's result.
var openLibrary func(*lua.LState)

func init() { openLibrary = Open }

func codePointers(fns ...lua.LGFunction) map[uintptr]bool {
	m := map[uintptr]bool{}
	for _, fn := range fns {
		m[reflect.ValueOf(fn).Pointer()] = true
	}
	return m
}

func isIn(set map[uintptr]bool, frame unsafe.Pointer) bool {
	fn := frameFn(frame)
	return fn.IsG && fn.GFunction != nil && set[reflect.ValueOf(fn.GFunction).Pointer()]
}

// callerPosition is msg, an error raised by the Go function running in
// frame cf, without the position gopher-lua put in front of it where Lua
// 5.1 puts none: where the function's caller is a Go function too.
func callerPosition(cf unsafe.Pointer, msg lua.LString) lua.LString {
	running := cf
	caller := frameParent(running)
	if caller == nil || !frameFn(caller).IsG || !isIn(standardLibrary(), running) ||
		isIn(exactPositions(), running) || wrapsCoroutine(frameFn(running)) {
		return msg
	}
	up := caller
	for up != nil && frameFn(up).IsG {
		up = frameParent(up)
	}
	if up == nil {
		return msg
	}
	text, ok := strings.CutPrefix(string(msg), position(frameFn(up), framePc(up)-1))
	if !ok {
		return msg
	}
	return lua.LString(text)
}
