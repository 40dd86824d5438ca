package bindings

import (
	"slices"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Reading a name a module or an object does not have is an error that
// says what it does have, where Lua would give nil and, for a call, the
// "attempt to call a nil value" that names nothing: A.shpe,
// A:copy_to_hots(), cuda.zero. Lua code that probes for an optional name
// uses rawget on a module; objects have no optional names.

// deviceFields and hostFields are the arrays' fields, in the order the
// reference lists them.
var (
	deviceFields = append([]string{"shape"}, fixedFields[:]...)
	hostFields   = []string{"shape", "dtype", "size", "nbytes", "ndim", "pinned", "mapped"}
)

// noSuchName raises the error for key, which typ's fields and methods
// lack: DeviceArray has no field or method 'shpe'; did you mean 'shape'?
// (fields: shape, ...; methods: clone, ...).
func noSuchName(L *lua.LState, typ string, key lua.LValue, fields []string, methods *lua.LTable) {
	what, list := "method", ""
	if fields != nil {
		what, list = "field or method", "fields: "+strings.Join(fields, ", ")+"; "
	}
	names := tableKeys(methods)
	badArgument(L, "%s has no %s %s%s (%smethods: %s)", typ, what, quoteKey(key),
		didYouMean(key, slices.Concat(names, fields)), list, strings.Join(names, ", "))
}

// strictMethods makes reading a name that methods, the __index table of
// typ's metatable, lacks an error.
func strictMethods(L *lua.LState, typ string, methods *lua.LTable) {
	methods.Metatable = L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"__index": func(L *lua.LState) int {
		noSuchName(L, typ, L.Get(2), nil, methods)
		return 0
	}})
}

// strictModule makes reading a name that the module's table lacks an
// error naming the module's functions. The table itself is unchanged, so
// pairs, rawget and assignments see it as before.
func strictModule(L *lua.LState, name string, mod *lua.LTable) *lua.LTable {
	mod.Metatable = L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"__index": func(L *lua.LState) int {
		names := tableKeys(mod)
		badArgument(L, "module '%s' has no field %s%s (functions: %s)", name, quoteKey(L.Get(2)), didYouMean(L.Get(2), names), strings.Join(names, ", "))
		return 0
	}})
	return mod
}

// tableKeys are t's string keys, sorted.
func tableKeys(t *lua.LTable) []string {
	var names []string
	t.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			names = append(names, string(s))
		}
	})
	sort.Strings(names)
	return names
}

func quoteKey(key lua.LValue) string {
	switch key.(type) {
	case lua.LString:
		return "'" + valueText(key) + "'"
	case lua.LNumber, lua.LBool:
		return typeName(key) + " " + valueText(key)
	}
	return typeName(key)
}

// didYouMean is "; did you mean 'zeros'?" for the name closest to key by
// edit distance, if one is close: two edits at most, and fewer than key
// has letters.
func didYouMean(key lua.LValue, names []string) string {
	s, ok := key.(lua.LString)
	if !ok {
		return ""
	}
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(string(s), n); d < bestDist && d < len(s) {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean '" + best + "'?"
}

// editDistance counts the insertions, deletions, substitutions and
// swaps of neighbours that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
