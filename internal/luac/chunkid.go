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
	lua51.CallNameOf = CallNameOf
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

// callNames maps each prototype Load compiled to how its calls named the
// functions they call, by pc; keys are weak, as in sources.
var callNames sync.Map // weak.Pointer[lua.FunctionProto] -> map[int]lua51.CallName

func recordCallNames(proto *lua.FunctionProto, names map[int]lua51.CallName) {
	key := weak.Make(proto)
	callNames.Store(key, names)
	runtime.AddCleanup(proto, func(k weak.Pointer[lua.FunctionProto]) { callNames.Delete(k) }, key)
}

// CallNameOf says how the call at pc of proto named the function it calls,
// as Lua 5.1's getobjname reads it back: false where Load did not compile
// proto or the call named nothing.
func CallNameOf(proto *lua.FunctionProto, pc int) (lua51.CallName, bool) {
	names, ok := callNames.Load(weak.Make(proto))
	if !ok {
		return lua51.CallName{}, false
	}
	n, ok := names.(map[int]lua51.CallName)[pc]
	return n, ok
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
