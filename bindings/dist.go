package bindings

import (
	"errors"
	"fmt"
	"os"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/dist"
	"github.com/gluaproject/glua/runtime"
)

// distModule is the dist module: this process's rank and the collectives
// between the job's processes. The group is joined on the first call, from
// the launch environment, so that a script that never calls dist pays no
// rendezvous and a script run alone is a group of one.
type distModule struct {
	rt    *runtime.Runtime
	group **dist.Group // shared by the functions of one loaded module
}

func (m distModule) funcs() map[string]lua.LGFunction {
	return map[string]lua.LGFunction{
		"rank":           m.rank,
		"size":           m.size,
		"local_rank":     m.localRank,
		"all_reduce":     m.allReduce,
		"broadcast":      m.broadcast,
		"reduce":         m.reduce,
		"all_gather":     m.allGather,
		"reduce_scatter": m.reduceScatter,
		"send":           m.send,
		"recv":           m.recv,
		"barrier":        m.barrier,
		"wait":           m.wait,
	}
}

func openDist(rt *runtime.Runtime, L *lua.LState) int {
	registerArrayTypes(rt, L)
	m := distModule{rt: rt, group: new(*dist.Group)}
	L.Push(strictModule(L, "dist", L.SetFuncs(L.NewTable(), m.funcs())))
	return 1
}

// joined is the group, joined now if this is the first call that needs it.
func (m distModule) joined(L *lua.LState, name string) *dist.Group {
	if *m.group != nil {
		return *m.group
	}
	place, err := dist.FromEnv(os.Getenv)
	if err == nil {
		*m.group, err = dist.New(m.rt, dist.Options{Place: place, Context: L.Context()})
	}
	if err != nil {
		var de *dist.Error
		if errors.As(err, &de) {
			err = de.Err
		}
		raise(L, name, fmt.Errorf("joining the ranks: %w", err))
	}
	return *m.group
}

// done raises a failed call's error under the Lua name of the call.
func done(L *lua.LState, name string, err error) int {
	if err == nil {
		return 0
	}
	var de *dist.Error
	if errors.As(err, &de) {
		err = de.Err
	}
	raise(L, name, err)
	return 0
}

func (m distModule) rank(L *lua.LState) int {
	L.Push(lua.LNumber(m.joined(L, "dist.rank").Rank()))
	return 1
}

func (m distModule) size(L *lua.LState) int {
	L.Push(lua.LNumber(m.joined(L, "dist.size").Size()))
	return 1
}

func (m distModule) localRank(L *lua.LState) int {
	L.Push(lua.LNumber(m.joined(L, "dist.local_rank").LocalRank()))
	return 1
}

// checkOp reads an optional reduction name at argument n; "sum" if absent.
func checkOp(L *lua.LState, name string, n int) dist.Op {
	v := L.Get(n)
	if v == lua.LNil {
		return dist.Sum
	}
	s, ok := v.(lua.LString)
	if !ok {
		argError(L, name, n, "op must be a string, got %s", typeName(v))
	}
	op, err := dist.ParseOp(string(s))
	if err != nil {
		argError(L, name, n, "%s", err)
	}
	return op
}

func (m distModule) allReduce(L *lua.LState) int {
	const name = "dist.all_reduce"
	x, op := checkArray(L, name, 1), checkOp(L, name, 2)
	return done(L, name, m.joined(L, name).AllReduce(x, op))
}

func (m distModule) broadcast(L *lua.LState) int {
	const name = "dist.broadcast"
	x, root := checkArray(L, name, 1), checkInt(L, name, 2, "root")
	return done(L, name, m.joined(L, name).Broadcast(x, root))
}

func (m distModule) reduce(L *lua.LState) int {
	const name = "dist.reduce"
	x, root, op := checkArray(L, name, 1), checkInt(L, name, 2, "root"), checkOp(L, name, 3)
	return done(L, name, m.joined(L, name).Reduce(x, root, op))
}

func (m distModule) allGather(L *lua.LState) int {
	const name = "dist.all_gather"
	out, x := checkArray(L, name, 1), checkArray(L, name, 2)
	async := optBool(L, name, options(L, name, 3, "async"), "async", false)
	g := m.joined(L, name)
	if async {
		return done(L, name, g.AllGatherAsync(out, x))
	}
	return done(L, name, g.AllGather(out, x))
}

func (m distModule) reduceScatter(L *lua.LState) int {
	const name = "dist.reduce_scatter"
	out, x, op := checkArray(L, name, 1), checkArray(L, name, 2), checkOp(L, name, 3)
	return done(L, name, m.joined(L, name).ReduceScatter(out, x, op))
}

func (m distModule) send(L *lua.LState) int {
	const name = "dist.send"
	x, peer := checkArray(L, name, 1), checkInt(L, name, 2, "peer")
	return done(L, name, m.joined(L, name).Send(x, peer))
}

func (m distModule) recv(L *lua.LState) int {
	const name = "dist.recv"
	x, peer := checkArray(L, name, 1), checkInt(L, name, 2, "peer")
	return done(L, name, m.joined(L, name).Recv(x, peer))
}

func (m distModule) wait(L *lua.LState) int {
	const name = "dist.wait"
	return done(L, name, m.joined(L, name).Wait())
}

func (m distModule) barrier(L *lua.LState) int {
	const name = "dist.barrier"
	return done(L, name, m.joined(L, name).Barrier())
}
