package bindings_test

import (
	"strings"
	"testing"
)

func TestDistAloneIsAGroupOfOneWhoseCollectivesLeaveArraysAsTheyAre(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `
		local dist, cuda = require("dist"), require("cuda")
		assert(dist.rank() == 0 and dist.size() == 1 and dist.local_rank() == 0)
		local x = cuda.to_device({1, 2, 3, 4})
		dist.all_reduce(x); dist.all_reduce(x, "avg"); dist.reduce(x, 0, "max"); dist.broadcast(x, 0)
		assert(table.concat(x:to_table(), ",") == "1,2,3,4")
		local out = cuda.zeros({2, 2})
		dist.all_gather(out, x)
		assert(out[2][1] == 3)
		local part = cuda.zeros({4})
		dist.reduce_scatter(part, out)
		assert(part[4] == 4)
		dist.barrier()`)
}

func TestDistBadCallsAreErrorsNamingTheCall(t *testing.T) {
	rt := newRuntime(t)
	mustDo(t, rt, `dist, cuda = require("dist"), require("cuda")`)
	for code, want := range map[string]string{
		`dist.send(cuda.zeros({2}), 0)`:                           "dist.send: no peer in a single process",
		`dist.recv(cuda.zeros({2}), 1)`:                           "dist.recv: no peer in a single process",
		`dist.broadcast(cuda.zeros({2}), 1)`:                      "dist.broadcast: root 1 out of range: ranks are 0 to 0",
		`dist.all_reduce(cuda.zeros({2}), "mean")`:                `dist.all_reduce: bad argument #2 (unknown reduction "mean"`,
		`dist.all_gather(cuda.zeros({3}), cuda.zeros({2}))`:       "dist.all_gather: out has 3 elements, want 2 (1 ranks × 2 of x)",
		`dist.reduce_scatter(cuda.zeros({2}), cuda.zeros({3}))`:   "dist.reduce_scatter: x has 3 elements, want 2 (1 ranks × 2 of out)",
		`local x = cuda.zeros({2}); x:free(); dist.all_reduce(x)`: "dist.all_reduce: x: use of freed array",
		`dist.all_reduce({1, 2})`:                                 "dist.all_reduce: bad argument #1 (DeviceArray expected, got table)",
	} {
		err := rt.DoString(code)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", code, err, want)
		}
	}
}

func TestDistLaunchEnvironmentErrorIsALuaError(t *testing.T) {
	t.Setenv("GLUA_RANK", "3")
	t.Setenv("GLUA_WORLD_SIZE", "2")
	t.Setenv("GLUA_LOCAL_RANK", "0")
	rt := newRuntime(t)
	err := rt.DoString(`require("dist").rank()`)
	want := "dist.rank: joining the ranks: the glua launch environment: GLUA_RANK=3 is not between 0 and GLUA_WORLD_SIZE-1 (1)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v\nwant %s", err, want)
	}
}
