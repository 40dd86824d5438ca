package lua51

import (
	"reflect"

	lua "github.com/yuin/gopher-lua"
)

// NumberString is n as Lua 5.1 writes it: printf's "%.14g", with inf,
// -inf, nan and -nan. glua's own messages and printing use it, so that a
// number reads the same wherever glua writes it.
func NumberString(n float64) string { return numberString(lua.LNumber(n)) }

// ToString is Lua 5.1's tostring(v): a number as "%.14g", anything else
// as gopher-lua writes it, or what its __tostring returns, which need not
// be a string. gopher-lua's LNumber.String, which its tostring and print
// use, writes Go's shortest form instead: "0.3333333333333333",
// "1000000000000000", "+Inf", "NaN".
func ToString(L *lua.LState, v lua.LValue) lua.LValue {
	if n, ok := v.(lua.LNumber); ok {
		return lua.LString(numberString(n))
	}
	return L.ToStringMeta(v)
}

// IsTostring says whether v is the tostring Open installs, which a caller
// such as print may then run as ToString without a call through Lua.
func IsTostring(v lua.LValue) bool {
	p, ok := goFunc(v)
	return ok && p == tostringCode
}

var tostringCode = reflect.ValueOf(lua.LGFunction(baseTostring)).Pointer()

// baseTostring is tostring(v).
func baseTostring(L *lua.LState) int {
	L.Push(ToString(L, L.CheckAny(1)))
	return 1
}

// numbersAsText is io.write or file:write writing numbers as Lua 5.1's
// does (fprintf with "%.14g"); gopher-lua's writes them in Go's form. It
// turns each number into its text and calls gopher-lua's write, which
// keeps the file handling and the messages its own.
type numbersAsText struct {
	write *lua.LFunction // gopher-lua's
	first int            // the first argument to write: 2 for a file's method
}

func (w numbersAsText) call(L *lua.LState) int {
	top := L.GetTop()
	for i := w.first; i <= top; i++ {
		switch L.Get(i).(type) {
		case lua.LNumber, lua.LString:
		default:
			L.ArgError(i, "string expected, got "+typeName(L, i))
		}
	}
	L.Push(w.write)
	for i := 1; i <= top; i++ {
		v := L.Get(i)
		if n, ok := v.(lua.LNumber); ok {
			v = lua.LString(numberString(n))
		}
		L.Push(v)
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}
