package bindings_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/runtime"
)

// goPanicText is what Go writes for a panic, a bad format verb (%!d) or
// a nil value: text a message of glua's never holds, since each names
// the call and the problem in the script's terms.
var goPanicText = []string{"runtime error", "nil pointer", "interface conversion", "index out of range", "goroutine", "%!", "<nil>"}

// walkValues makes every kind of value a script can pass: nil,
// booleans, numbers (none so large that a shape of it would allocate
// much), strings, tables that are and are not lists, launch
// configurations and options tables with values good and bad, functions,
// a coroutine, each of glua's userdata types, and the arrays that are
// easy to get wrong: freed, empty, views, integer, mapped read-only. Each
// is a pair {label, value}. No option prints (verbose, progress) or
// changes the pool's limits, which would starve the calls after it.
// The values a call can change (free, close, write) are made afresh for
// each list of arguments the walk extends; the others once, so that the
// walk makes no more streams and kernels than a script would. It runs in
// a directory of the test's own.
const walkValues = `
local cuda, kernels, batch = require("cuda"), require("kernels"), require("batch")
cuda.create_npy("walk.npy", { 2, 2 })
local stream, event, mapped = cuda.stream(), cuda.event(), cuda.load_npy("walk.npy", { mmap = true })
local kernel = kernels.jit(function(x) local i = kernels.grid(1) end)
local compiled = cuda.backend() == "cuda" and kernels.compile('extern "C" __global__ void walk(float *x, int n) {}', "walk")
return function()
  local freed = cuda.ones({ 2, 2 })
  freed:free()
  local square = cuda.ones({ 2, 2 })
  local values = {
    { "nil", nil }, { "true", true }, { "false", false },
    { "0", 0 }, { "2", 2 }, { "-1", -1 }, { "2.5", 2.5 }, { "inf", 1 / 0 }, { "nan", 0 / 0 },
    { "\"\"", "" }, { "\"float32\"", "float32" }, { "\"sum\"", "sum" },
    { "{}", {} }, { "{2, 2}", { 2, 2 } }, { "{{1, 2}, {3, 4}}", { { 1, 2 }, { 3, 4 } } }, { "{x = 1}", { x = 1 } },
    { "{grid = 1, block = 1}", { grid = 1, block = 1 } }, { "{grid = {0}, block = 1}", { grid = { 0 }, block = 1 } },
    { "{grid = 1, block = 1, shared = -1, stream = 1}", { grid = 1, block = 1, shared = -1, stream = 1 } },
    { "{axis = 1}", { axis = 1 } }, { "{axis = 2.5}", { axis = 2.5 } }, { "{alpha = nan}", { alpha = 0 / 0 } },
    { "{out = HostArray 0x2}", { out = cuda.host_array({ 0, 2 }) } }, { "{out = HostArray 2x2}", { out = cuda.host_array({ 2, 2 }) } },
    { "{out = DeviceArray 0x2}", { out = cuda.zeros({ 0, 2 }) } }, { "{budget = 1, precision = \"tf32\"}", { budget = 1, precision = "tf32" } },
    { "{prefetch = 1e300, start = 0}", { prefetch = 1e300, start = 0 } }, { "{mmap = true}", { mmap = true } },
    { "{signature = \"float*\", options = {\"-x\"}}", { signature = "float*", options = { "-x" } } },
    { "function", function() end }, { "x * 2", function(x) return x * 2 end }, { "coroutine", coroutine.create(function() end) },
    { "DeviceArray 2x2", square }, { "DeviceArray row view", square[2] },
    { "DeviceArray 0x2", cuda.zeros({ 0, 2 }) }, { "DeviceArray 2x0", cuda.zeros({ 2, 0 }) },
    { "DeviceArray int32", cuda.ones({ 2, 2 }, "int32") }, { "freed DeviceArray", freed },
    { "HostArray 2x2", cuda.host_array({ 2, 2 }) }, { "HostArray 0x2", cuda.host_array({ 0, 2 }) },
    { "HostArray 2x0", cuda.host_array({ 2, 0 }) }, { "read-only mapped HostArray", mapped },
    { "Stream", stream }, { "Event", event }, { "Graph", cuda.graph(function() end) },
    { "BatchIterator", batch.iter({ { { 1, 2 } } }) }, { "Kernel", kernel },
  }
  if compiled then
    values[#values + 1] = { "compiled Kernel", compiled }
  end
  return values
end
`

// walkValue is one argument the walk passes.
type walkValue struct {
	label string
	v     lua.LValue
}

// walkDepth is the last argument position the walk reaches, and
// walkPrefixes how many argument lists it extends past the second: the
// second position takes every value after each first value the call
// took, later ones each value after a few of the lists before them that
// the call took (those that ran first).
const (
	walkDepth    = 5
	walkPrefixes = 4
)

// No call of glua's Lua API, whatever it is given, gives Go's panic text
// or lets a Go panic out: every module function, method and metamethod
// (the functions the API reference's test finds, and the metamethods
// beside them) is called with every kind of value in each of its first
// positions, self included, after values it took in the ones before.
// No call is left out: with the launch environment cleared dist is a
// group of one, whose collectives do not wait and whose send and recv
// raise at once, and no glua function sleeps or starts a process.
func TestNoCallGivesGoPanicText(t *testing.T) {
	for _, name := range []string{"GLUA_RANK", "GLUA_WORLD_SIZE", "GLUA_LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_RANK",
		"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
		"MASTER_ADDR", "MASTER_PORT", "NCCL_COMM_ID"} {
		t.Setenv(name, "")
	}
	t.Chdir(t.TempDir()) // where the calls that take a path write
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) { walkAPI(t, backend) })
	}
}

func walkAPI(t *testing.T, backend string) {
	rt, err := runtime.New(runtime.Options{Backend: backend, Config: defaultConfig(), CPUMemory: "1GiB"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	L := rt.Lua()
	if err := rt.DoString("walk_values = (function() " + walkValues + " end)()"); err != nil {
		t.Fatal(err)
	}
	foreign := L.NewUserData()
	foreign.Value = "a host's own value"
	empty := L.NewUserData()
	// held keeps the values of the function being walked reachable from
	// Lua, so that the runtime's sweep of dropped arrays leaves them be.
	var held *lua.LTable
	fresh := func() []walkValue {
		if err := L.CallByParam(lua.P{Fn: L.GetGlobal("walk_values"), NRet: 1, Protect: true}); err != nil {
			t.Fatal(err)
		}
		list := L.Get(-1).(*lua.LTable)
		L.Pop(1)
		held.Append(list)
		values := []walkValue{{"another userdata", foreign}, {"an empty userdata", empty}}
		for i := 1; i <= list.Len(); i++ {
			pair := list.RawGetInt(i).(*lua.LTable)
			values = append(values, walkValue{pair.RawGetInt(1).String(), pair.RawGetInt(2)})
		}
		return values
	}
	functions := apiFunctions(t, rt)
	if len(functions) < 100 {
		t.Fatalf("found only %d functions, methods and metamethods: the walk is broken", len(functions))
	}
	// An attempt is a list of arguments and what the call made of it: ""
	// when it ran, else its error.
	type attempt struct {
		args    []walkValue
		outcome string
	}
	start, calls := time.Now(), 0
	for _, f := range functions {
		held = L.NewTable()
		L.SetGlobal("walk_held", held)
		failures := 0
		call := func(args []walkValue) (outcome string, accepted bool) {
			calls++
			base := L.GetTop()
			defer L.SetTop(base)
			L.Push(f.fn)
			for _, a := range args {
				L.Push(a.v)
			}
			err := L.PCall(len(args), lua.MultRet, nil)
			if err == nil {
				return "", true
			}
			apiErr, ok := err.(*lua.ApiError)
			if !ok {
				t.Fatalf("%s: PCall gave %T: %v", f.name, err, err)
			}
			msg := apiErr.Object.String()
			if bad := badMessage(apiErr.Type, msg); bad != "" && failures < 3 {
				failures++
				t.Errorf("%s(%s): %s: %s", f.name, labels(args), bad, msg)
			}
			return "error: " + msg, !blamesArguments(msg, len(args), f.kind == "method")
		}
		none, _ := call(nil)
		prefixes := []attempt{{nil, none}}
		for depth := 1; depth <= walkDepth && len(prefixes) > 0; depth++ {
			// The lists that ran come first, so that the few taken
			// further are the likeliest to get far.
			var ran, refused []attempt
			for _, p := range prefixes {
				// A position the call ignores gives, for a value no
				// call takes, what the call gave without it: the walk
				// passes only that value there (a module's __index reads
				// its second argument, not its first), which keeps
				// calls that are slow to fail (kernels.compile, NVRTC's)
				// few.
				probe := append(slices.Clone(p.args), walkValue{"another userdata", foreign})
				probeOutcome, probeAccepted := call(probe)
				if probeOutcome == p.outcome {
					refused = append(refused, attempt{probe, probeOutcome})
					continue
				}
				for _, v := range fresh() {
					args := append(slices.Clone(p.args), v)
					outcome, accepted := probeOutcome, probeAccepted
					if v.v != foreign {
						outcome, accepted = call(args)
					}
					if outcome == "" {
						ran = append(ran, attempt{args, outcome})
					} else if accepted {
						refused = append(refused, attempt{args, outcome})
					}
				}
			}
			prefixes = append(ran, refused...)
			if depth > 1 {
				prefixes = prefixes[:min(len(prefixes), walkPrefixes)]
			}
		}
	}
	t.Logf("%d functions, methods and metamethods, %d calls in %v", len(functions), calls, time.Since(start))
}

// badMessage says what is wrong with an error a call raised: a Go panic,
// or Go's panic text in the message; "" if nothing.
func badMessage(kind lua.ApiErrorType, msg string) string {
	if kind == lua.ApiErrorPanic {
		return "a Go panic"
	}
	for _, s := range goPanicText {
		if strings.Contains(msg, s) {
			return fmt.Sprintf("Go's text %q in the message", s)
		}
	}
	return ""
}

// badArgumentNumber finds the argument an error message blames.
var badArgumentNumber = regexp.MustCompile(`bad argument #(\d+)`)

// blamesArguments says whether an error blames one of the n arguments a
// call was given (a method's messages count them after self, as Lua
// does): the walk then passes no more after them.
func blamesArguments(msg string, n int, method bool) bool {
	if strings.Contains(msg, "called on") {
		return true
	}
	m := badArgumentNumber.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	k, _ := strconv.Atoi(m[1])
	if method {
		return k < n
	}
	return k <= n
}

func labels(args []walkValue) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = a.label
	}
	return strings.Join(s, ", ")
}
