package lua51

import (
	"reflect"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// call is unguarded, with a way back from the two overflows that escape
// L.PCall when it has a handler and would otherwise end the process:
//
//   - when the value stack is full at its bound, L.PCall has no room to
//     push the handler and raises again from inside its own recovery;
//   - gopher-lua's growing call stack never reports itself full, so the
//     call that passes the bound panics ("lua callstack overflow") where no
//     frame is left for the handler.
//
// The escaping error is recovered here and the state put back as L.PCall
// leaves it after an error: the call stack, the current frame and the
// value stack as they were before the call, the upvalues of the unwound
// frames closed (their values are lost by then). Both overflows come back
// as Lua 5.1's "stack overflow", naming the setting that bounds them.
func (p *protection) call(L *lua.LState, nargs, nret int) (err error) {
	if !guardLayout.ok || !layout.ok {
		return overflow(p.unguarded(L, nargs, nret))
	}
	frame := *currentFrame(L)
	had := *hasErrorFunc(L)
	base := L.GetTop() - nargs - 1
	defer func() {
		rcv := recover()
		if rcv == nil {
			return
		}
		apiErr, ok := rcv.(*lua.ApiError)
		if !ok {
			panic(rcv)
		}
		sp := 0
		if frame != nil {
			sp = *(*int)(unsafe.Add(frame, guardLayout.frameIdx)) + 1
		}
		callStack(L).MethodByName("SetSp").Call([]reflect.Value{reflect.ValueOf(sp)})
		*currentFrame(L) = frame
		*hasErrorFunc(L) = had
		L.SetTop(base)
		closeUpvaluesAbove(L, p.mark, true)
		err = overflow(apiErr)
	}()
	return overflow(p.unguarded(L, nargs, nret))
}

// guardLayout holds what call needs besides layout: the LState's call
// stack (an unexported interface with Sp and SetSp) and a frame's index in
// it.
var guardLayout = func() (l struct {
	ok              bool
	stack, frameIdx uintptr
	stackType       reflect.Type
}) {
	state := reflect.TypeFor[lua.LState]()
	st, ok1 := state.FieldByName("stack")
	cur, ok2 := state.FieldByName("currentFrame")
	if !ok1 || !ok2 || st.Type.Kind() != reflect.Interface || cur.Type.Kind() != reflect.Pointer {
		return l
	}
	_, ok3 := st.Type.MethodByName("SetSp")
	idx, ok4 := cur.Type.Elem().FieldByName("Idx")
	l.stack, l.stackType, l.frameIdx = st.Offset, st.Type, idx.Offset
	l.ok = ok3 && ok4 && idx.Type == reflect.TypeFor[int]()
	return l
}()

func callStack(L *lua.LState) reflect.Value {
	return reflect.NewAt(guardLayout.stackType, unsafe.Add(unsafe.Pointer(L), guardLayout.stack)).Elem()
}

// overflow words gopher-lua's two overflows as Lua 5.1 does, with the
// [lua] setting that bounds each; other errors pass unchanged.
func overflow(err error) error {
	apiErr, ok := err.(*lua.ApiError)
	if !ok {
		return err
	}
	msg, ok := apiErr.Object.(lua.LString)
	if !ok {
		return err
	}
	switch s := string(msg); {
	case s == "lua callstack overflow":
		apiErr.Object = lua.LString("stack overflow (calls nested deeper than [lua] call_depth allows)")
		apiErr.Type = lua.ApiErrorRun
	case strings.HasSuffix(s, "registry overflow"):
		apiErr.Object = lua.LString(strings.TrimSuffix(s, "registry overflow") + "stack overflow (more values than [lua] stack_slots allows)")
		apiErr.Type = lua.ApiErrorRun
	}
	return err
}
