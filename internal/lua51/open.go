package lua51

import (
	"reflect"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// replaced names the gopher-lua functions Open replaces, by where they
// sit in a fresh state.
var replaced = []struct{ lib, name string }{
	{"", "pcall"},
	{"", "xpcall"},
	{"", "error"},
	{"", "assert"},
	{"", "tonumber"},
	{"", "tostring"},
	{"", "collectgarbage"},
	{"", "setmetatable"},
	{"", "rawset"},
	{"", "next"},
	{"", "select"},
	{"", "require"},
	{"", "unpack"},
	{"", "ipairs"},
	{"", "getfenv"},
	{"", "setfenv"},
	{"string", "char"},
	{"string", "byte"},
	{"string", "find"},
	{"string", "match"},
	{"string", "gmatch"},
	{"string", "gsub"},
	{"string", "len"},
	{"string", "lower"},
	{"string", "upper"},
	{"string", "rep"},
	{"string", "reverse"},
	{"string", "sub"},
	{"string", "dump"},
	{"table", "insert"},
	{"table", "remove"},
	{"string", "format"},
	{"table", "concat"},
	{"table", "maxn"},
	{"table", "getn"},
	{"table", "sort"},
	{"math", "ldexp"},
	{"math", "mod"},
	{"math", "fmod"},
	{"math", "random"},
	{"math", "randomseed"},
	{"coroutine", "create"},
	{"coroutine", "status"},
	{"coroutine", "yield"},
	{"coroutine", "resume"},
	{"coroutine", "wrap"},
	{"math", "pow"},
	{"math", "acos"},
	{"math", "asin"},
	{"math", "sin"},
	{"math", "cos"},
	{"math", "tan"},
	{"math", "log"},
	{"math", "log10"},
	{"math", "exp"},
	{"math", "cosh"},
	{"math", "sinh"},
	{"math", "tanh"},
	{"math", "atan"},
	{"math", "atan2"},
	{"math", "rad"},
	{"math", "deg"},
	{"math", "modf"},
	{"math", "max"},
	{"math", "min"},
	{"debug", "getinfo"},
	{"debug", "traceback"},
	{"debug", "getlocal"},
	{"debug", "setlocal"},
	{"debug", "setmetatable"},
	{"debug", "setfenv"},
	{"", "newproxy"},
	{"io", "write"},
	{"io", "open"},
	{"io", "lines"},
	{"io", "read"},
	{"io", "close"},
	{"io", "type"},
	{"io", "popen"},
	{"io", "input"},
	{"io", "output"},
	{"os", "difftime"},
	{"os", "exit"},
	{"os", "setlocale"},
	{"os", "execute"},
	{"os", "tmpname"},
	{"os", "remove"},
	{"os", "rename"},
	{"os", "time"},
	{"os", "date"},
	{fileMethods, "write"},
	{fileMethods, "read"},
	{fileMethods, "close"},
	{fileMethods, "flush"},
	{fileMethods, "lines"},
	{fileMethods, "seek"},
	{fileMethods, "setvbuf"},
	{fileMethods, "__tostring"},
}

// fileMethods names the metatable of gopher-lua's files, whose __index is
// itself and holds their methods.
const fileMethods = "FILE*"

// builtins maps the code pointers of gopher-lua's own versions of the
// replaced functions, taken from a scratch state, to "lib.name", so that
// Open recognises them and leaves alone whatever a host put in their place.
var builtins = sync.OnceValue(func() map[uintptr]string {
	L := lua.NewState()
	defer L.Close()
	found := map[uintptr]string{}
	for _, r := range replaced {
		if p, ok := goFunc(L.GetField(library(L, r.lib), r.name)); ok {
			found[p] = r.lib + "." + r.name
		}
	}
	return found
})

func goFunc(v lua.LValue) (uintptr, bool) {
	fn, ok := v.(*lua.LFunction)
	if !ok || !fn.IsG || fn.GFunction == nil {
		return 0, false
	}
	return reflect.ValueOf(fn.GFunction).Pointer(), true
}

// library is the global table named lib, the globals themselves for "",
// the files' methods for fileMethods, or nil where there is none.
func library(L *lua.LState, lib string) *lua.LTable {
	switch lib {
	case "":
		return L.G.Global
	case fileMethods:
		t, _ := L.G.Registry.RawGetString(fileMethods).(*lua.LTable)
		return t
	}
	t, _ := L.G.Global.RawGetString(lib).(*lua.LTable)
	return t
}

// Open installs glua's Lua 5.1 behaviour into L's globals:
//
//   - the functions listed in replaced (the base library's pcall, error,
//     select, unpack and others, and some of string, table, math,
//     coroutine, debug, io and os) replace gopher-lua's, each only where
//     gopher-lua's own is still in place, so that a sandbox's wrapper or
//     removal stands;
//   - the files' metatable gets Lua 5.1's __gc where it has none;
//   - gcinfo is added where collectgarbage exists, debug.getregistry
//     where the debug library does, and table.foreach,
//     table.foreachi and table.setn where the table library exists, each
//     only where the name is free;
//   - math.huge becomes infinity where it holds gopher-lua's value.
//
// A state without some library (lua.Options{SkipOpenLibs: true}, or one a
// sandbox pruned) gets only what fits, and calling Open again changes
// nothing. Coroutines share their state's globals, so Open once per state.
func Open(L *lua.LState) {
	if L == nil || L.G == nil || L.G.Global == nil {
		return
	}
	gc := &collector{pause: 200, stepmul: 200}
	rnd := random{newRandom()}
	funcs := map[string]lua.LGFunction{
		".pcall":          basePcall,
		".xpcall":         baseXpcall,
		".error":          baseError,
		".assert":         baseAssert,
		".tonumber":       baseTonumber,
		".tostring":       baseTostring,
		".collectgarbage": gc.collectgarbage,
		".select":         baseSelect,
		".require":        baseRequire,
		"os.date":         osDate,
		".unpack":         baseUnpack,
		".ipairs":         newIpairs(L).call,
		"string.rep":      strRep,
		"string.upper":    strUpper,
		"string.lower":    strLower,
		"string.sub":      strSub,
		"string.dump":     strDump,
		"math.ldexp":      mathLdexp,
		"string.format":   strFormat,
		"string.gmatch":   strGmatch,
		"string.char":     strChar,
		"string.byte":     strByte,
		"table.insert":    tableInsert,
		"table.remove":    tableRemove,
		"table.concat":    tableConcat,
		"table.maxn":      tableMaxn,
		"table.getn":      tableGetn,
		"table.sort":      tableSort,
		"math.mod":        mathMod,
		"math.fmod":       mathMod,
		"math.pow":        mathPow,
		"math.acos":       mathAcos,
		"math.asin":       mathAsin,
		"math.sin":        mathSin,
		"math.cos":        mathCos,
		"math.tan":        mathTan,
		"math.log":        mathLog,
		"math.exp":        mathExp,
		"math.log10":      mathLog10,
		"math.cosh":       mathCosh,
		"math.sinh":       mathSinh,
		"math.tanh":       mathTanh,
		"math.atan":       mathAtan,
		"math.atan2":      mathAtan2,
		"math.rad":        mathRad,
		"math.deg":        mathDeg,
		"math.modf":       mathModf,
		"math.max":        mathMax,
		"math.min":        mathMin,
		"math.random":     rnd.random,
		"math.randomseed": rnd.randomseed,
	}
	known := builtins()
	var std []lua.LValue
	files := false // gopher-lua's file type is known (ioread.go)
	if io := library(L, "io"); io != nil {
		std = []lua.LValue{io.RawGetString("stdin"), io.RawGetString("stdout"), io.RawGetString("stderr")}
		if stdin, ok := std[0].(*lua.LUserData); ok && fileFields(stdin) {
			files = true
			funcs["io.read"] = ioRead
			funcs[fileMethods+".read"] = fileRead
		}
	}
	for _, r := range replaced {
		t := library(L, r.lib)
		if t == nil {
			continue
		}
		old, isFn := t.RawGetString(r.name).(*lua.LFunction)
		if !isFn {
			continue
		}
		p, ok := goFunc(old)
		key := r.lib + "." + r.name
		if !ok || known[p] != key {
			continue
		}
		fn := funcs[key]
		switch key {
		case "coroutine.yield":
			fn = yielder{old.GFunction}.call
		case "coroutine.resume":
			fn = resumer{old.GFunction}.call
		case "coroutine.wrap":
			create, okCreate := t.RawGetString("create").(*lua.LFunction)
			resume, okResume := t.RawGetString("resume").(*lua.LFunction)
			if !okCreate || !okResume {
				continue
			}
			fn = wrapper{create, resume}.call
		case ".setmetatable":
			fn = before{setmetatableArgs, old.GFunction}.call
		case ".next":
			fn = before{nextArgs, old.GFunction}.call
		case ".rawset":
			fn = before{rawsetPadding, old.GFunction}.call
		case "io.open":
			fn = fileOpener{fileResult{old.GFunction, "open", false}}.call
		case "io.close", fileMethods + ".close":
			if files {
				fn = fileCloser{old.GFunction, std, key == "io.close"}.call
			}
		case fileMethods + ".flush":
			if files {
				fn = fileMethod{old.GFunction, nil, false}.call
			}
		case fileMethods + ".lines":
			if files {
				fn = fileLines
			}
		case fileMethods + ".seek":
			if files {
				fn = fileResult{fileMethod{old.GFunction, []string{"set", "cur", "end"}, true}.call, "seek", true}.call
			}
		case fileMethods + ".setvbuf":
			if files {
				fn = fileMethod{old.GFunction, []string{"no", "full", "line"}, false}.call
			}
		case "os.remove":
			fn = fileResult{old.GFunction, "remove", false}.call
		case "os.rename":
			fn = fileResult{old.GFunction, "rename", false}.call
		case "io.lines":
			fn = ioLines{old.GFunction}.call
		case "os.time":
			fn = before{osTimeFields, old.GFunction}.call
		case "coroutine.create":
			fn = creator{old.GFunction}.call
		case "coroutine.status":
			fn = before{func(L *lua.LState) { coroutineArg(L, "status") }, old.GFunction}.call
		case ".getfenv":
			fn = baseGetfenv
		case ".setfenv":
			fn = baseSetfenv
		case "string.find":
			fn = atInit{emptyFind, true}.call
		case "string.match":
			fn = atInit{emptyMatch, false}.call
		case "string.gsub":
			fn = strGsub
		case "debug.getinfo":
			fn = debugGetinfo
		case ".newproxy":
			fn = baseNewproxy
		case "debug.getlocal":
			fn = debugGetlocal
		case "debug.setlocal":
			fn = debugSetlocal
		case "debug.setmetatable":
			fn = debugSetmetatable
		case "debug.setfenv":
			fn = debugSetfenv
		case "debug.traceback":
			fn = debugTraceback
		case "io.write", fileMethods + ".write":
			if key == "io.write" {
				fn = numbersAsText{old, 1}.call
			} else {
				fn = numbersAsText{old, 2}.call
			}
			if files {
				fn = fileWriter{fn, key == "io.write"}.call
			}
		case "io.type":
			fn = before{ioTypeArg, old.GFunction}.call
		case "io.input", "io.output":
			fn = defaultFile{old, key == "io.output"}.call
		case "io.popen":
			if files {
				fn = ioPopen
			}
		case "os.exit":
			fn = before{osExitArgs, old.GFunction}.call
		case "os.setlocale":
			fn = osSetlocale
		case "os.difftime":
			fn = osDifftime
		case "os.execute":
			fn = osExecute
		case "os.tmpname":
			fn = osTmpname
		case fileMethods + ".__tostring":
			if files {
				fn = fileToString
			}
		}
		if n := stringParams[key]; n > 0 {
			if fn == nil {
				fn = old.GFunction
			}
			fn = textArgs{fn, n}.call
		}
		if fn == nil {
			continue // gopher-lua's stays (io.read where its file type is not known)
		}
		// gopher-lua's function may read its upvalues (io.lines reads
		// the default input file there), and fn calls it in its own
		// frame, so the replacement carries them.
		upvalues := make([]lua.LValue, len(old.Upvalues))
		for i, uv := range old.Upvalues {
			upvalues[i] = uv.Value()
		}
		t.RawSetString(r.name, L.NewClosure(fn, upvalues...))
	}

	add := func(t *lua.LTable, name string, fn lua.LGFunction) {
		if t != nil && t.RawGetString(name) == lua.LNil {
			t.RawSetString(name, L.NewFunction(fn))
		}
	}
	if g := L.G.Global; g.RawGetString("collectgarbage") != lua.LNil {
		add(g, "gcinfo", baseGcinfo)
	}
	add(library(L, "debug"), "getregistry", debugGetregistry)
	add(library(L, "debug"), "sethook", debugSethook)
	add(library(L, "debug"), "gethook", debugGethook)
	table := library(L, "table")
	add(table, "foreach", tableForeach)
	add(table, "foreachi", tableForeachi)
	add(table, "setn", tableSetn)
	if mt := library(L, fileMethods); mt != nil && mt.RawGetString("__gc") == lua.LNil {
		if closer, ok := mt.RawGetString("close").(*lua.LFunction); ok {
			mt.RawSetString("__gc", L.NewFunction(fileGc{mt, closer, std}.call))
		}
	}
	if m := library(L, "math"); m != nil && m.RawGetString("huge") == gopherHuge {
		m.RawSetString("huge", huge)
	}
	// loadlib.c's package.config has no newline after its last line
	if p := library(L, "package"); p != nil && p.RawGetString("config") == lua.LString("/\n;\n?\n!\n-\n") {
		p.RawSetString("config", lua.LString("/\n;\n?\n!\n-"))
	}
}
