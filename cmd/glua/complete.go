package main

import (
	"slices"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// completer offers, at Tab, what may follow the name before the cursor:
// a global or a keyword; after `t.` the fields of t; after `v:` the
// methods of v, which are in its metatable's __index table or, for a
// type whose __index is a function (glua's arrays compute their fields
// and elements), in its metatable's __methods table. It reads tables raw
// and runs no Lua code. readline calls it on
// its own goroutine; busy is held while a statement runs, and then it
// offers nothing rather than read a Lua state in use.
type completer struct {
	L    *lua.LState
	busy *sync.Mutex
}

// Do is readline.AutoCompleter's: the endings of the candidates and the
// length of what they complete.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	if !c.busy.TryLock() {
		return nil, 0
	}
	defer c.busy.Unlock()
	path, sep, prefix, ok := splitName(string(line[:pos]))
	if !ok {
		return nil, 0
	}
	var endings [][]rune
	for _, name := range c.candidates(path, sep) {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			endings = append(endings, []rune(rest))
		}
	}
	return endings, len([]rune(prefix))
}

// splitName takes the name ending text, such as "cuda.to_" or "x:co":
// the names before the last '.' or ':' (path), that separator (sep, 0 for
// none) and the part being typed (prefix). ok is false where text does not
// end in such a name (inside a number, after a space): a Tab there,
// pasted code's indentation say, offers nothing.
func splitName(text string) (path []string, sep byte, prefix string, ok bool) {
	start := len(text)
	for start > 0 && (isNameByte(text[start-1]) || text[start-1] == '.' || text[start-1] == ':') {
		start--
	}
	word := text[start:]
	if word == "" {
		return nil, 0, "", false
	}
	if i := strings.LastIndexAny(word, ".:"); i >= 0 {
		sep, prefix = word[i], word[i+1:]
		path = strings.Split(word[:i], ".")
	} else {
		prefix = word
	}
	for _, name := range append(slices.Clone(path), prefix) {
		if name != "" && name[0] >= '0' && name[0] <= '9' {
			return nil, 0, "", false
		}
	}
	for _, name := range path {
		if name == "" || strings.Contains(name, ":") {
			return nil, 0, "", false
		}
	}
	return path, sep, prefix, true
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// keywords are offered with the globals.
var keywords = []string{"and", "break", "do", "else", "elseif", "end", "false", "for", "function",
	"if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"}

// candidates lists, sorted, the names that may follow path and sep.
func (c *completer) candidates(path []string, sep byte) []string {
	if len(path) == 0 {
		names := append(fieldNames(c.L, c.L.G.Global, false), keywords...)
		slices.Sort(names)
		return slices.Compact(names)
	}
	v := lua.LValue(c.L.G.Global)
	for _, name := range path {
		if v = field(c.L, v, name); v == lua.LNil {
			return nil
		}
	}
	return fieldNames(c.L, v, sep == ':')
}

// maxIndexDepth bounds the walk along __index tables, which may loop.
const maxIndexDepth = 8

// field is v[name] as far as it can be read without running code: a raw
// field of a table, else of its metatable's __index table, and so on.
func field(L *lua.LState, v lua.LValue, name string) lua.LValue {
	for range maxIndexDepth {
		if t, ok := v.(*lua.LTable); ok {
			if f := t.RawGetString(name); f != lua.LNil {
				return f
			}
		}
		if v = L.GetMetaField(v, "__index"); v.Type() != lua.LTTable {
			return lua.LNil
		}
	}
	return lua.LNil
}

// fieldNames lists the names v[name] finds (see field), only those of
// functions when methods is set, sorted.
func fieldNames(L *lua.LState, v lua.LValue, methods bool) []string {
	var names []string
	for range maxIndexDepth {
		if t, ok := v.(*lua.LTable); ok {
			t.ForEach(func(k, val lua.LValue) {
				if s, ok := k.(lua.LString); ok && isName(string(s)) && (!methods || val.Type() == lua.LTFunction) {
					names = append(names, string(s))
				}
			})
		}
		next := L.GetMetaField(v, "__index")
		if next.Type() == lua.LTFunction && methods {
			next = L.GetMetaField(v, "__methods")
		}
		if v = next; v.Type() != lua.LTTable {
			break
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || slices.Contains(keywords, s) {
		return false
	}
	for i := range len(s) {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
