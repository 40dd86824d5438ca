package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// userKind is one of glua's userdata types as a script knows it: its name
// and the variable its methods' examples call it by.
type userKind struct{ name, short string }

var (
	deviceArrayKind = userKind{"DeviceArray", "d"}
	hostArrayKind   = userKind{"HostArray", "h"}
	streamKind      = userKind{"Stream", "s"}
	eventKind       = userKind{"Event", "e"}
	graphKind       = userKind{"Graph", "g"}
	iterKind        = userKind{"BatchIterator", "it"}
	kernelKind      = userKind{"Kernel", "k"}
)

// kindOf is the kind of the Go value behind a userdata, if it is glua's.
func kindOf(v any) (userKind, bool) {
	switch v.(type) {
	case *runtime.Array:
		return deviceArrayKind, true
	case *runtime.HostArray:
		return hostArrayKind, true
	case *runtime.Stream:
		return streamKind, true
	case *runtime.Event:
		return eventKind, true
	case *runtime.Graph:
		return graphKind, true
	case *luaIter:
		return iterKind, true
	case launcher:
		return kernelKind, true
	}
	return userKind{}, false
}

// userValue is the Go value of type T behind a userdata, if v is one.
func userValue[T any](v lua.LValue) (T, bool) {
	if ud, ok := v.(*lua.LUserData); ok && ud != nil {
		t, ok := ud.Value.(T)
		return t, ok
	}
	var zero T
	return zero, false
}

// selfOf is the object a method of kind k was called on. Calling a method
// with a dot instead of a colon is the usual mistake, so the error says
// so: BatchIterator:close: called on nil; call it as it:close(...).
func selfOf[T any](L *lua.LState, k userKind, method string) T {
	v, ok := userValue[T](L.Get(1))
	if !ok {
		badArgument(L, "%s:%s: called on %s; call it as %s:%s(...)", k.name, method, typeName(L.Get(1)), k.short, method)
	}
	return v
}

// metaSelf is the object a metamethod of kind k (__index, __len,
// __tostring...) was called for: Lua passes it first, and only a script
// that takes the metamethod out of the metatable can pass another value.
func metaSelf[T any](L *lua.LState, k userKind, event string) T {
	v, ok := userValue[T](L.Get(1))
	if !ok {
		badArgument(L, "%s.%s: bad argument #1 (%s expected, got %s)", k.name, event, k.name, typeName(L.Get(1)))
	}
	return v
}

// checkUser is argument n of the call name, which must be of kind k.
func checkUser[T any](L *lua.LState, name string, n int, k userKind) T {
	v, ok := userValue[T](L.Get(n))
	if !ok {
		argError(L, name, n, "%s expected, got %s", k.name, typeName(L.Get(n)))
	}
	return v
}
