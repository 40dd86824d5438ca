package bindings

import (
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/runtime"
)

// matmul is batch.matmul(A, B [, {budget =, precision =, out =, verbose =}]):
// A·B of host matrices, by tiles where they do not fit; a HostArray (out,
// when given). verbose prints the tile plan as print does.
func (m batchModule) matmul(L *lua.LState) int {
	const name = "batch.matmul"
	A, B := checkHost(L, name, 1), checkHost(L, name, 2)
	t := options(L, name, 3, "budget", "precision", "out", "verbose")
	o := batch.MatmulOptions{Budget: optSize(L, name, t, "budget"), Precision: optString(L, name, t, "precision", "")}
	out := t.RawGetString("out")
	if v := out; v != lua.LNil {
		h, ok := userValue[*runtime.HostArray](v)
		if !ok {
			badArgument(L, "%s: option out must be a HostArray, got %s", name, typeName(v))
		}
		o.Out = h
	}
	var plan strings.Builder
	verbose := optBool(L, name, t, "verbose", false)
	if verbose {
		o.Verbose = &plan
	}
	C, err := batch.Matmul(m.rt, A, B, o)
	if verbose && plan.Len() > 0 {
		L.CallByParam(lua.P{Fn: L.GetGlobal("print"), NRet: 0}, lua.LString(strings.TrimSuffix(plan.String(), "\n")))
	}
	if err != nil {
		raise(L, name, err)
	}
	if o.Out != nil {
		L.Push(out) // the script's own value, so that it compares equal
	} else {
		pushHost(L, C)
	}
	return 1
}

// optSize reads an option that is a size: bytes, or a string with units;
// 0 when left out.
func optSize(L *lua.LState, name string, t *lua.LTable, key string) uint64 {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return 0
	case lua.LNumber:
		if b, ok := intOf(float64(v)); ok && b > 0 {
			return uint64(b)
		}
	case lua.LString:
		if b, err := config.ParseSize(string(v)); err == nil && b > 0 {
			return b
		}
	}
	badArgument(L, "%s: option %s must be a size (bytes, or a string such as \"512MiB\"), got %s", name, key, valueText(t.RawGetString(key)))
	return 0
}
