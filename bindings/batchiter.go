package bindings

import (
	"errors"
	"fmt"
	"os"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/batch"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/dist"
	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

const batchIterType = "glua.BatchIterator"

// luaIter is a batch iterator as a script holds it: a callable userdata,
// so that `for i, a, b in batch.iter(batches) do` calls it each time.
type luaIter struct {
	it    *batch.Iter
	index int // of the batch the body has now
}

// registerBatchIterType makes the BatchIterator metatable.
func registerBatchIterType(L *lua.LState) {
	methods := L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{"close": batchIterClose})
	strictMethods(L, "BatchIterator", methods)
	L.SetFuncs(L.NewTypeMetatable(batchIterType), map[string]lua.LGFunction{
		"__call":     batchIterNext,
		"__tostring": batchIterString,
	})
	L.GetTypeMetatable(batchIterType).(*lua.LTable).RawSetString("__index", methods)
}

// iter is batch.iter(batches [, {prefetch = 1, progress}]): batches is a list of
// batches or a function returning the next one (nil at the end); a batch
// is a HostArray or a list of HostArrays and (nested) tables of numbers.
func (m batchModule) iter(L *lua.LState) int {
	const name = "batch.iter"
	src := L.Get(1)
	opts := iterOptions(L, name)
	shard := opts.Shard
	var next func() (lua.LValue, error)
	switch v := src.(type) {
	case *lua.LTable:
		if err := checkList(v, "batch"); err != nil {
			argError(L, name, 1, "the list of batches %s", err)
		}
		i := 0
		next = func() (lua.LValue, error) {
			for i++; !shard.Owns(i); i++ {
			}
			return v.RawGetInt(i), nil
		}
		opts.Total = shard.Count(v.Len())
		opts.Unchanged = true // a list's arrays are the script's to leave alone until the loop ends
	case *lua.LFunction:
		i := 0
		next = func() (lua.LValue, error) {
			for {
				b, err := callSource(L, v, m.rt.WrapLuaError)
				if i++; err != nil || b == lua.LNil || shard.Owns(i) {
					return b, err
				}
			}
		}
	default:
		argError(L, name, 1, "a list of batches or a function returning them expected, got %s", typeName(src))
	}
	source := func() ([]*runtime.HostArray, error) {
		v, err := next()
		if err != nil {
			return nil, err
		}
		return hostBatch(v)
	}
	it, err := batch.NewIter(m.rt, source, opts)
	if err != nil {
		raise(L, name, err)
	}
	pushUserData(L, &luaIter{it: it}, batchIterType)
	// A loop that breaks out, or whose body fails, leaves the iterator
	// unreachable: the next walk of the Lua state frees its batches.
	_ = m.rt.ReleaseWhenUnreachable(L.Get(-1).(*lua.LUserData), it.Close) // neither is nil
	return 1
}

// iterOptions reads batch.iter's options: prefetch (1), progress (true,
// false, or left out: on a terminal once the loop passes two seconds),
// and shard (false: every batch; true: this rank's share).
func iterOptions(L *lua.LState, name string) batch.Options {
	t := options(L, name, 2, "prefetch", "progress", "shard")
	prefetch, ok := intOf(optNumber(L, name, t, "prefetch", 1))
	if !ok || prefetch < 0 {
		badArgument(L, "%s: option prefetch must be a non-negative integer, got %s", name, valueText(t.RawGetString("prefetch")))
	}
	progress := batch.ProgressAuto
	if t.RawGetString("progress") != lua.LNil {
		progress = batch.ProgressOff
		if optBool(L, name, t, "progress", false) {
			progress = batch.ProgressOn
		}
	}
	return batch.Options{Prefetch: prefetch, Progress: progress, Shard: optShard(L, name, t)}
}

// optShard is this rank's share of the batches when the shard option is
// set, from the launch environment (dist.FromEnv); every batch otherwise.
func optShard(L *lua.LState, name string, t *lua.LTable) batch.Shard {
	if !optBool(L, name, t, "shard", false) {
		return batch.Shard{}
	}
	place, err := dist.FromEnv(os.Getenv)
	if err != nil {
		raise(L, name, fmt.Errorf("shard: %w", err))
	}
	return batch.Shard{Rank: place.Rank, Size: place.Size}
}

// callSource calls a script's batch function, turning its error into a Go
// one so that the iterator can free what it holds before it is raised.
func callSource(L *lua.LState, fn *lua.LFunction, wrap func(error) error) (lua.LValue, error) {
	top := L.GetTop()
	defer L.SetTop(top)
	L.Push(fn)
	if err := lua51.PCall(L, 0, 1, nil); err != nil {
		return nil, luaFailure{"the batch function failed", wrap(err)}
	}
	return L.Get(-1), nil
}

// luaFailure is a Lua function's error as a Go one: its message without
// the traceback (the error raised again carries its own), and the Go error
// behind it for errors.Is.
type luaFailure struct {
	what string
	err  error
}

func (e luaFailure) Error() string {
	var se *runtime.ScriptError
	if errors.As(e.err, &se) {
		return e.what + ": " + se.Lua.Object.String()
	}
	return e.what + ": " + e.err.Error()
}

func (e luaFailure) Unwrap() error { return e.err }

// hostBatch converts one batch to host arrays; nil ends the iteration.
func hostBatch(v lua.LValue) ([]*runtime.HostArray, error) {
	switch b := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case *lua.LUserData:
		if h, ok := b.Value.(*runtime.HostArray); ok {
			return []*runtime.HostArray{h}, nil
		}
	case *lua.LTable:
		n := b.Len()
		if n == 0 {
			return nil, fmt.Errorf("an empty batch")
		}
		if err := checkList(b, "array"); err != nil {
			return nil, fmt.Errorf("the batch %w", err)
		}
		hosts := make([]*runtime.HostArray, n)
		for i := range n {
			h, err := hostItem(b.RawGetInt(i + 1))
			if err != nil {
				return nil, fmt.Errorf("array %d: %w", i+1, err)
			}
			hosts[i] = h
		}
		return hosts, nil
	}
	return nil, fmt.Errorf("a batch is a HostArray or a list of arrays, got %s", typeName(v))
}

func hostItem(v lua.LValue) (*runtime.HostArray, error) {
	switch x := v.(type) {
	case *lua.LTable:
		return tableToHost(x, device.Float32)
	case *lua.LUserData:
		if h, ok := x.Value.(*runtime.HostArray); ok {
			return h, nil
		}
	}
	return nil, fmt.Errorf("HostArray or table of numbers expected, got %s", typeName(v))
}

// batchIterNext is the iterator's __call: the next batch's index and
// device arrays, or nil after the last.
func batchIterNext(L *lua.LState) int {
	li := metaSelf[*luaIter](L, iterKind, "__call")
	i, arrays, ok, err := li.it.Next()
	if err != nil {
		raise(L, "batch.iter", err)
	}
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	li.index = i
	L.Push(lua.LNumber(i))
	for _, a := range arrays {
		pushArray(L, a) // the iterator frees them: not the script's
	}
	return 1 + len(arrays)
}

func batchIterClose(L *lua.LState) int {
	if err := selfOf[*luaIter](L, iterKind, "close").it.Close(); err != nil {
		raise(L, "BatchIterator:close", err)
	}
	return 0
}

func batchIterString(L *lua.LState) int {
	li := metaSelf[*luaIter](L, iterKind, "__tostring")
	L.Push(lua.LString(fmt.Sprintf("BatchIterator (at batch %d)", li.index)))
	return 1
}
