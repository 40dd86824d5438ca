package runtime

import (
	"reflect"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luaheap"
)

// A script's arrays come back without Go's collector. Go's collector
// cannot see that a few bytes of Array hold a MiB of device memory, and
// each collection costs a script tens of microseconds however little it
// finds, so a loop that drops an array each time either holds far more
// memory than it uses or spends most of its time collecting. Lua's own
// collector would know at once; glua does the next best thing: at an
// allocation, when the bytes allocated since the last look pass the
// trigger (collectIfDue), it walks the Lua state as Lua's collector marks
// it (internal/luaheap) and frees every array the script was given that
// no Lua value refers to any more. The walk costs microseconds for a
// script's few hundred tables and functions, and frees at once.
//
// Only arrays handed to the script (GiveToScript) are freed so: what Go
// code holds, the walk cannot see. Go code that keeps an array it got
// from a script past the call calls Keep, as C code anchors a Lua value
// it keeps in the registry; an array freed because Go code did not is
// never a crash, only a "use of freed array" error that says so.

// GiveToScript hands a, just made for a script, to the script: once no
// Lua value refers to it, glua may free it at an allocation. glua's
// modules call it for each array they create; a Go host calls it for an
// array it makes and returns to a script without keeping it. Views share
// their array's memory and fate, so giving one changes nothing. A nil
// array, or another runtime's, is an error that wraps ErrBadArgument.
func (rt *Runtime) GiveToScript(a *Array) error {
	if err := rt.ownArray("GiveToScript", a); err != nil {
		return err
	}
	if a.view || a.buf.script {
		return nil
	}
	a.buf.script = true
	rt.mem.pacer.given(a.buf.blk.Size)
	return nil
}

// Keep takes a back from the script: only Free, a scope's end, Close or
// Go's collector free it from now on. Go code that keeps an array it got
// from a script (a userdata's *Array) past the call calls Keep. A nil
// array, or another runtime's, is an error that wraps ErrBadArgument.
func (rt *Runtime) Keep(a *Array) error {
	if err := rt.ownArray("Keep", a); err != nil {
		return err
	}
	a.buf.script = false
	return nil
}

// unmade refuses, for the Go API call op, an array no runtime made: nil
// or a zero Array.
func unmade(op string, a *Array) error {
	switch {
	case a == nil:
		return badGoArgument(op, "the *Array is nil")
	case a.buf == nil:
		return badGoArgument(op, "the Array was not made by a runtime (a zero Array)")
	}
	return nil
}

// ownArray refuses, for the Go API call op, an array that is not one of
// rt's: nil, a zero Array no runtime made, or another runtime's.
func (rt *Runtime) ownArray(op string, a *Array) error {
	if err := unmade(op, a); err != nil {
		return err
	}
	if a.buf.rt != rt {
		return badGoArgument(op, "the array belongs to another runtime")
	}
	return nil
}

// Walks that cost more than sweepCheap are spaced by sweepMinInterval
// times what the last one took, so that a script with a large Lua heap
// (hundreds of thousands of tables: milliseconds a walk) spends at most
// about a ninth of its time walking; past sweepMaxTriggers triggers' worth
// of allocations it walks anyway, which bounds what its dropped arrays
// hold: 64 MiB at the least trigger, however slow the machine. A script's
// usual few hundred tables and functions take a few microseconds to walk,
// and putting that off costs more than it saves: the arrays that outlive
// the young list get cleanups (measured on the H100 in BENCHMARKS.md).
const (
	sweepCheap       = 50 * time.Microsecond
	sweepMinInterval = 8
	sweepMaxTriggers = 4
)

// ReleaseWhenUnreachable ties a Go resource a module made for the script
// to the userdata that carries it: once a walk of the Lua state finds no
// Lua value referring to ud, the runtime calls release, on its own
// goroutine, so release may free device memory. A loop that breaks out of
// a batch iterator leaves it for the next walk. A nil ud or release is an
// error that wraps ErrBadArgument.
func (rt *Runtime) ReleaseWhenUnreachable(ud *lua.LUserData, release func() error) error {
	if ud == nil || release == nil {
		return badGoArgument("ReleaseWhenUnreachable", "the userdata and the release function must not be nil")
	}
	rt.script.holdResource(ud, rt.sweep.mark, release)
	return nil
}

// sweepScript frees the arrays given to the script that no Lua value
// refers to. It reports false, freeing nothing, when the walk could not
// see everything the state holds (a userdata of a type it does not know,
// a channel): then only Go's collector can tell.
func (rt *Runtime) sweepScript() bool {
	if rt.L == nil {
		return false
	}
	if rt.sweep.walker == nil {
		rt.sweep.walker = &luaheap.Walker{}
		rt.sweep.walker.Userdata = rt.markUserdata
	}
	start := time.Now()
	rt.sweep.mark++
	if !rt.sweep.walker.Walk(rt.L) {
		return false
	}
	// The spacing of walks answers for the walk alone: freeing what it
	// found costs what freeing each array explicitly would.
	rt.sweep.walked(start)
	rt.script.releaseUnreached(rt.sweep.mark)
	rt.mu.Lock()
	dead := rt.sweep.dead[:0]
	for b := rt.mem.buffers.head; b != nil; b = b.next {
		if b.script && b.mark != rt.sweep.mark {
			dead = append(dead, b)
		}
	}
	rt.mu.Unlock()
	for i, b := range dead {
		b.swept = true
		rt.freeBuffer(b)
		dead[i] = nil
	}
	rt.sweep.dead = dead[:0]
	return true
}

// markUserdata marks the buffer of an array the walk reached, and tells
// the walk whether a userdata's Go value can hold Lua values it would
// miss.
func (rt *Runtime) markUserdata(ud *lua.LUserData) bool {
	rt.script.reached(ud, rt.sweep.mark)
	switch v := ud.Value.(type) {
	case *Array:
		v.buf.mark = rt.sweep.mark
		return true
	case LuaValueHolder:
		v.EachLuaValue(rt.sweep.walker.Add)
		return true
	}
	return holdsNoLuaValues(ud.Value)
}

// LuaValueHolder is implemented by the Go value of a userdata that keeps
// Lua values the script may not otherwise reach, so that the walk that
// finds a script's dropped arrays sees them too.
type LuaValueHolder interface {
	EachLuaValue(add func(lua.LValue))
}

var (
	gluaPackages  = strings.TrimSuffix(reflect.TypeFor[Array]().PkgPath(), "/runtime") + "/"
	luaPackage    = reflect.TypeFor[lua.LTable]().PkgPath()
	noLuaValuesOf sync.Map // reflect.Type → bool, shared by every runtime
)

// holdsNoLuaValues reports whether a userdata's Go value cannot refer to
// a Lua value: glua's own types (which refer to Lua values only through
// LuaValueHolder), gopher-lua's library's (an open file, string.gmatch's
// state), and other types whose fields, followed through pointers, slices
// and maps, hold no interface, function, channel or gopher-lua value. A
// host's type that might is unknown to the walk.
func holdsNoLuaValues(v any) bool {
	if v == nil {
		return true
	}
	t := reflect.TypeOf(v)
	if ok, known := noLuaValuesOf.Load(t); known {
		return ok.(bool)
	}
	named := t
	for named.Kind() == reflect.Pointer {
		named = named.Elem()
	}
	pkg := named.PkgPath()
	ok := strings.HasPrefix(pkg, gluaPackages) || pkg == luaPackage || !mayHoldLua(t, map[reflect.Type]bool{})
	noLuaValuesOf.Store(t, ok)
	return ok
}

func mayHoldLua(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if visiting[t] {
		return false // a cycle adds nothing the first visit does not
	}
	visiting[t] = true
	switch t.Kind() {
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return mayHoldLua(t.Elem(), visiting)
	case reflect.Map:
		return mayHoldLua(t.Key(), visiting) || mayHoldLua(t.Elem(), visiting)
	case reflect.Struct:
		// gopher-lua's values all hold an interface (LValue) somewhere.
		for i := range t.NumField() {
			if mayHoldLua(t.Field(i).Type, visiting) {
				return true
			}
		}
	}
	return false
}
