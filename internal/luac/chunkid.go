package luac

import (
	"runtime"
	"strings"
	"sync"
	"weak"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
)

func init() {
	lua51.ChunkSource = ChunkSource
	lua51.CallNameWhat = CallNameWhat
}

// Lua 5.1 cuts a chunk's name to fit a buffer: LUA_IDSIZE (60) bytes for
// the positions of runtime errors and debug.getinfo's short_src, MAXSRC
// (80) for syntax errors.
const (
	idSize     = 60
	syntaxSize = 80
)

// ChunkID is luaO_chunkid: how Lua 5.1 shows the chunk named source in
// error positions. A name starting with '=' shows as the rest; one
// starting with '@' (a file) as the rest, keeping its last part after
// "..." when too long; any other name is the source itself, shown as
// [string "first line..."].
func ChunkID(source string) string { return chunkID(source, idSize) }

func chunkID(source string, size int) string {
	source = cutAtZero(source)
	switch {
	case strings.HasPrefix(source, "="):
		s := source[1:]
		if len(s) > size-1 {
			s = s[:size-1]
		}
		return s
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		room := size - len(" '...' ") - 1
		if len(s) > room {
			return "..." + s[len(s)-room:]
		}
		return s
	}
	room := size - len(` [string "..."] `) - 1
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	if n > room {
		n = room
	}
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}

// sources maps each prototype Load compiled to its chunk's name as given
// (a prototype's SourceName is the shown form), for debug.getinfo's
// source. Keys are weak, as in trees.
var sources sync.Map // weak.Pointer[lua.FunctionProto] -> string

func recordSource(proto *lua.FunctionProto, name string) {
	key := weak.Make(proto)
	sources.Store(key, name)
	runtime.AddCleanup(proto, func(k weak.Pointer[lua.FunctionProto]) { sources.Delete(k) }, key)
	for _, child := range proto.FunctionPrototypes {
		recordSource(child, name)
	}
}

// callKinds maps each prototype Load compiled to the namewhat of its
// named calls, by pc; keys are weak, as in sources.
var callKinds sync.Map // weak.Pointer[lua.FunctionProto] -> map[int]string

func recordCallKinds(proto *lua.FunctionProto, kinds map[int]string) {
	key := weak.Make(proto)
	callKinds.Store(key, kinds)
	runtime.AddCleanup(proto, func(k weak.Pointer[lua.FunctionProto]) { callKinds.Delete(k) }, key)
}

// CallNameWhat says how the call at pc of proto named the function it
// calls: "global", "local", "upvalue", "field" or "method", Lua 5.1's
// namewhat; false where Load did not compile proto or the call has no
// name.
func CallNameWhat(proto *lua.FunctionProto, pc int) (string, bool) {
	kinds, ok := callKinds.Load(weak.Make(proto))
	if !ok {
		return "", false
	}
	kind, ok := kinds.(map[int]string)[pc]
	return kind, ok
}

// ChunkSource returns the chunk name Load was given for the chunk fn
// belongs to ("@file", "=stdin", or a loaded string's source), which is
// debug.getinfo's source in Lua 5.1, or false for a function Load did not
// compile.
func ChunkSource(fn *lua.LFunction) (string, bool) {
	if fn == nil || fn.Proto == nil {
		return "", false
	}
	s, ok := sources.Load(weak.Make(fn.Proto))
	if !ok {
		return "", false
	}
	return s.(string), true
}
