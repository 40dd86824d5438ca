package bindings_test

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// reference is the Lua API reference this test keeps in step with the
// modules.
const reference = "../docs/lua-api.md"

// An entry of the reference is a heading naming a module function
// (cuda.to_device(...) or pool.set_limit{...}), a method
// (DeviceArray:free()) or a field (DeviceArray.shape).
var entryHeading = regexp.MustCompile("^### `([A-Za-z_][A-Za-z0-9_]*)([.:])([A-Za-z_][A-Za-z0-9_]*)(.*)`$")

type entry struct {
	kind string // "function", "method" or "field"
	name string // cuda.to_device, DeviceArray:free, DeviceArray.shape
	body string // up to the next heading
}

// documented reads the reference's entries.
func documented(t *testing.T) []entry {
	t.Helper()
	text, err := os.ReadFile(reference)
	if err != nil {
		t.Fatal(err)
	}
	var entries []entry
	for _, section := range strings.Split(string(text), "\n#")[1:] {
		heading, body, _ := strings.Cut(section, "\n")
		if !strings.HasPrefix(heading, "## `") {
			continue
		}
		m := entryHeading.FindStringSubmatch("#" + heading)
		if m == nil {
			t.Errorf("%s: heading #%s names no function, method or field (### `mod.f(args)`, ### `Type:m(args)`, ### `Type.field`)", reference, heading)
			continue
		}
		e := entry{name: m[1] + m[2] + m[3], body: body}
		switch {
		case m[2] == ":" && strings.HasPrefix(m[4], "("):
			e.kind = "method"
		case m[2] == "." && (strings.HasPrefix(m[4], "(") || strings.HasPrefix(m[4], "{")):
			e.kind = "function"
		case m[2] == "." && m[4] == "":
			e.kind = "field"
		default:
			t.Errorf("%s: heading #%s: a method takes (arguments), a field none", reference, heading)
			continue
		}
		entries = append(entries, e)
	}
	return entries
}

// apiFunction is one Go function of glua's Lua API.
type apiFunction struct {
	name string // cuda.to_device, DeviceArray:free, Stream.__tostring
	kind string // "function", "method" or "metamethod"
	fn   *lua.LFunction
}

// apiFunctions is every function of every module, every method of every
// userdata type the modules make, and every metamethod of those types,
// of their tables of methods and of the modules' tables, read from a
// fresh runtime's Lua state. A DeviceArray's metatable is one of several
// (one per shape), so that of an array made here stands for the others.
func apiFunctions(t *testing.T, rt *runtime.Runtime) []apiFunction {
	t.Helper()
	var found []apiFunction
	metamethods := func(owner string, v lua.LValue) {
		mt, ok := v.(*lua.LTable)
		if !ok {
			return
		}
		mt.ForEach(func(k, v lua.LValue) {
			if fn, ok := v.(*lua.LFunction); ok {
				found = append(found, apiFunction{owner + "." + k.String(), "metamethod", fn})
			}
		})
	}
	for _, mod := range runtime.Modules() {
		out, err := rt.Call("require", mod)
		if err != nil {
			t.Fatal(err)
		}
		table, ok := out[0].(*lua.LTable)
		if !ok {
			t.Fatalf("require(%q) gave %T, not a table", mod, out[0])
		}
		table.ForEach(func(k, v lua.LValue) {
			if fn, ok := v.(*lua.LFunction); ok {
				found = append(found, apiFunction{mod + "." + k.String(), "function", fn})
			}
		})
		metamethods(mod+"'s table", table.Metatable)
	}
	types := map[string]*lua.LTable{}
	rt.Lua().G.Registry.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		mt, isTable := v.(*lua.LTable)
		if ok && isTable && strings.HasPrefix(string(key), "glua.") && strings.Count(string(key), ".") == 1 {
			types[strings.TrimPrefix(string(key), "glua.")] = mt
		}
	})
	out, err := rt.Call("require", "cuda")
	if err != nil {
		t.Fatal(err)
	}
	zeros := out[0].(*lua.LTable).RawGetString("zeros")
	if err := rt.Lua().CallByParam(lua.P{Fn: zeros, NRet: 1, Protect: true}, lua.LNumber(2)); err != nil {
		t.Fatal(err)
	}
	perShape := rt.Lua().GetMetatable(rt.Lua().Get(-1))
	rt.Lua().Pop(1)
	for typ, mt := range types {
		methods, ok := mt.RawGetString("__index").(*lua.LTable)
		if !ok {
			// A type that computes its fields keeps its methods beside.
			if methods, ok = mt.RawGetString("__methods").(*lua.LTable); !ok {
				t.Errorf("glua.%s's __index is no table, and no __methods lists its methods", typ)
				continue
			}
		}
		methods.ForEach(func(k, v lua.LValue) {
			if fn, ok := v.(*lua.LFunction); ok {
				found = append(found, apiFunction{typ + ":" + k.String(), "method", fn})
			}
		})
		metamethods(typ, mt)
		metamethods(typ+"'s methods", methods.Metatable)
		if typ == "DeviceArray" && perShape != mt {
			metamethods("DeviceArray of a shape", perShape)
			if index, ok := perShape.(*lua.LTable).RawGetString("__index").(*lua.LTable); ok {
				metamethods("DeviceArray of a shape's fields", index.Metatable)
			}
		}
	}
	return found
}

// registered is every function of every module, as name → "function",
// and every method of every userdata type the modules make, as name →
// "method".
func registered(t *testing.T, rt *runtime.Runtime) map[string]string {
	t.Helper()
	found := map[string]string{}
	for _, f := range apiFunctions(t, rt) {
		if f.kind != "metamethod" {
			found[f.name] = f.kind
		}
	}
	return found
}

// The reference documents every function the modules register and every
// method of the objects they return, and nothing that does not exist;
// each entry says what it refuses and shows a line of Lua.
func TestLuaAPIReferenceMatchesTheModules(t *testing.T) {
	rt := newRuntime(t)
	code := registered(t, rt)
	if len(code) < 50 {
		t.Fatalf("found only %d functions and methods: the walk is broken", len(code))
	}
	mustDo(t, rt, `local cuda = require("cuda")
		objects = {DeviceArray = cuda.zeros({2, 2}), HostArray = cuda.host_array({2, 2})}
		function field(typ, name)
			local o = objects[typ]
			if o == nil then return false end
			local ok, v = pcall(function() return o[name] end) -- a name an object lacks is an error
			if not ok then return true, nil end
			return true, v
		end`)
	docs := map[string]bool{}
	for _, e := range documented(t) {
		if docs[e.name] {
			t.Errorf("%s is documented twice", e.name)
		}
		docs[e.name] = true
		if !strings.Contains(e.body, "\nErrors:") && !strings.HasPrefix(e.body, "Errors:") {
			t.Errorf("%s: the entry has no Errors: line", e.name)
		}
		if _, example, ok := strings.Cut(e.body, "```lua\n"); !ok {
			t.Errorf("%s: the entry has no Lua example", e.name)
		} else if out, err := rt.Call("loadstring", strings.Split(example, "```")[0]); err != nil {
			t.Fatal(err)
		} else if out[0] == nil {
			t.Errorf("%s: the example does not compile: %v", e.name, out[1])
		}
		if e.kind == "field" {
			typ, name, _ := strings.Cut(e.name, ".")
			out, err := rt.Call("field", typ, name)
			if err != nil {
				t.Fatal(err)
			}
			if out[0] != true {
				t.Errorf("%s is documented as a field, but %s is not a type with fields", e.name, typ)
			} else if out[1] == nil {
				t.Errorf("%s is documented, but a %s has no field %s", e.name, typ, name)
			}
			continue
		}
		if kind, ok := code[e.name]; !ok {
			t.Errorf("%s is documented as a %s, but no module registers it", e.name, e.kind)
		} else if kind != e.kind {
			t.Errorf("%s is documented as a %s, but it is a %s", e.name, e.kind, kind)
		}
	}
	var missing []string
	for name, kind := range code {
		if !docs[name] {
			missing = append(missing, fmt.Sprintf("%s (a %s)", name, kind))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s has no entry in %s", m, reference)
	}
}
