package lualimit

import (
	"math"
	"os"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

// wrapLibrary puts the size checks (and string.rep's deadline checks) in
// front of the library functions L has (lua51's table.sort looks at the
// context itself). Each wrapper
// reads its arguments only to size the result, and leaves every argument
// error to the function it wraps, called in the same frame so that the
// error names the function as the script called it.
func wrapLibrary(L *lua.LState) {
	str, _ := L.G.Global.RawGetString("string").(*lua.LTable)
	co, _ := L.G.Global.RawGetString("coroutine").(*lua.LTable)
	for _, w := range []struct {
		t    *lua.LTable
		name string
		wrap func(orig lua.LGFunction) lua.LGFunction
	}{
		{str, "rep", wrapRep},
		{str, "upper", sized(firstLength)},
		{str, "lower", sized(firstLength)},
		{str, "reverse", sized(firstLength)},
		{str, "char", sized(func(L *lua.LState) float64 { return float64(L.GetTop()) })},
		{str, "format", sized(formatSize)},
		{L.G.Global, "loadstring", sized(sourceSize)},
		{L.G.Global, "loadfile", sized(fileSourceSize)},
		{L.G.Global, "dofile", sized(fileSourceSize)},
		{co, "create", sized(threadSize)},
		{co, "wrap", sized(threadSize)},
	} {
		if w.t == nil {
			continue
		}
		fn, ok := w.t.RawGetString(w.name).(*lua.LFunction)
		if !ok || !fn.IsG {
			continue
		}
		w.t.RawSetString(w.name, L.NewFunction(w.wrap(fn.GFunction)))
	}
}

// sized checks the size size gives before calling the function.
func sized(size func(L *lua.LState) float64) func(lua.LGFunction) lua.LGFunction {
	return func(orig lua.LGFunction) lua.LGFunction {
		return func(L *lua.LState) int {
			if n := size(L); n >= lua51.BigString {
				if m := memoryOf(L); m != nil {
					m.Check(L, bytes(n))
				}
			}
			return orig(L)
		}
	}
}

// bytes is n as a byte count, saturating.
func bytes(n float64) uint64 {
	if n >= math.MaxUint64 || math.IsNaN(n) {
		return math.MaxUint64
	}
	return uint64(n)
}

// text is v's length as a string argument would have it: a string's, at
// most 24 for a number ("%.14g"), 0 for anything else.
func text(v lua.LValue) float64 {
	switch v := v.(type) {
	case lua.LString:
		return float64(len(v))
	case lua.LNumber:
		return 24
	}
	return 0
}

// number is v as a number argument would read it.
func number(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
		return f, err == nil
	}
	return 0, false
}

func firstLength(L *lua.LState) float64 { return text(L.Get(1)) }

// formatSize bounds string.format's result by its format and the text of
// its arguments, each item's width and precision (at most 99) included; %q
// can write an argument's special bytes in up to four, which the look at
// the heap counts.
func formatSize(L *lua.LState) float64 {
	n := text(L.Get(1))
	for i := 2; i <= L.GetTop(); i++ {
		n += text(L.Get(i)) + 128
	}
	return n
}

// The compiler takes about this many bytes for each byte of source
// (measured on glua's own scripts and generated tables: 10–30).
const compileBytesPerSourceByte = 32

func sourceSize(L *lua.LState) float64 {
	return text(L.Get(1)) * compileBytesPerSourceByte
}

// fileSourceSize is sourceSize for the file loadfile or dofile is given,
// by the file's size: its source is read and compiled in Go, where no
// look at the heap comes until it is done.
func fileSourceSize(L *lua.LState) float64 {
	name, ok := L.Get(1).(lua.LString)
	if !ok {
		return 0
	}
	fi, err := os.Stat(string(name))
	if err != nil || !fi.Mode().IsRegular() {
		return 0 // the function itself says what is wrong
	}
	return float64(fi.Size()) * compileBytesPerSourceByte
}

// threadBytes is what a new coroutine takes before it runs: its value
// stack (5,120 slots of 16 bytes) and call frames, about 108 KiB measured.
const threadBytes = 128 << 10

func threadSize(*lua.LState) float64 { return threadBytes }

// repPiece is how much string.rep writes between two looks at the
// context: a few milliseconds of copying.
const repPiece = 8 << 20

// wrapRep checks string.rep's result, len(s)·n bytes, before it is built,
// and builds a large one in pieces, looking at the context between them.
func wrapRep(orig lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		s, okS := L.Get(1).(lua.LString)
		n, okN := number(L.Get(2))
		if !okS || !okN || L.GetTop() > 2 {
			return orig(L)
		}
		// the count as Lua 5.1 reads it: a C int, so 2^32 + 2 is 2
		size := float64(len(s)) * float64(lua51.CInt(n))
		if size < lua51.BigString {
			return orig(L)
		}
		if m := memoryOf(L); m != nil {
			m.Check(L, bytes(size))
		}
		if L.Context() == nil || size < repPiece {
			return orig(L)
		}
		var b strings.Builder
		b.Grow(int(size))
		for b.Len() < int(size) {
			lua51.CheckContext(L)
			// Copy what is built so far, doubling, up to a piece a time.
			chunk := b.String()
			if chunk == "" {
				chunk = string(s)
			}
			if len(chunk) > repPiece {
				chunk = chunk[:max(len(s), repPiece-repPiece%len(s))]
			}
			b.WriteString(chunk[:min(len(chunk), int(size)-b.Len())])
		}
		L.Push(lua.LString(b.String()))
		return 1
	}
}
