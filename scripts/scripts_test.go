// Package scripts holds glua's example and benchmark scripts; its test runs
// every one of them so that none can rot.
package scripts_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/config"
	_ "github.com/gluaproject/glua/cpu"
	_ "github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/internal/scriptargs"
	"github.com/gluaproject/glua/runtime"
)

// SmallArgs reads testdata/small_args.txt: the arguments that keep each
// script quick on the CPU backend (matmul.lua's are also those of
// bench/matmul.lua: n_fp32, n_tf32_bf16; fragment.lua's the fill and the
// search step in MiB; plain.lua's every kernel at size 20, fib(20) for
// calls; dist_matmul.lua's and allreduce.lua's one process, where
// cmd/glua runs them with --nproc). Scripts not listed run with their
// defaults.
func smallArgs(t *testing.T) map[string][]string {
	t.Helper()
	args, err := scriptargs.Read(filepath.Join("testdata", "small_args.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func run(t *testing.T, script string, args []string) string {
	t.Helper()
	c := config.Default()
	var out bytes.Buffer
	rt, err := runtime.New(runtime.Options{Config: &c, Backend: "cpu", CPUMemory: "1GiB", Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	L := rt.Lua()
	argt := L.NewTable()
	argt.RawSetInt(0, lua.LString(script))
	for i, a := range args {
		argt.RawSetInt(i+1, lua.LString(a))
	}
	L.SetGlobal("arg", argt)
	if err := rt.DoFile(script); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	return out.String()
}

func TestEveryScriptRuns(t *testing.T) {
	scripts, _ := filepath.Glob("*.lua")
	bench, _ := filepath.Glob(filepath.Join("bench", "*.lua"))
	for _, b := range bench {
		if !strings.HasPrefix(filepath.Base(b), "_") { // _name.lua: a library the scripts load
			scripts = append(scripts, b)
		}
	}
	if len(scripts) == 0 {
		t.Fatal("no scripts found")
	}
	small := smallArgs(t)
	for _, s := range scripts {
		t.Run(s, func(t *testing.T) {
			out := run(t, s, small[filepath.Base(s)])
			if strings.TrimSpace(out) == "" {
				t.Fatalf("%s printed nothing", s)
			}
		})
	}
}

// TestMatmulShowsWhyPreallocationWins checks what the main job exists to
// show: the naive loop allocates every iteration, the other two only once.
func TestMatmulShowsWhyPreallocationWins(t *testing.T) {
	out := run(t, "matmul.lua", []string{"64", "5"})
	allocs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[0] == "naive":
			allocs["naive"] = f[3]
		case len(f) >= 4 && f[0] == "preallocated":
			allocs["preallocated"] = f[3]
		case len(f) >= 5 && f[0] == "in" && f[1] == "place":
			allocs["in place"] = f[4]
		}
	}
	if allocs["naive"] != "15" || allocs["preallocated"] != "3" || allocs["in place"] != "3" {
		t.Fatalf("allocations per pattern %v, want naive 15 (3 an iteration), the others 3 (once, before the loop); output:\n%s", allocs, out)
	}
	if !strings.Contains(out, "check: naive vs preallocated max |diff| 0") {
		t.Fatalf("the script's own check line is missing:\n%s", out)
	}
}

// TestNumbaKernelsInLuaMatchMatmul runs the seed's three kernels written in
// Lua; the script asserts each agrees with kernels.matmul.
func TestNumbaKernelsInLuaMatchMatmul(t *testing.T) {
	out := run(t, "numba_kernels.lua", []string{"33", "3"})
	for _, label := range []string{"naive", "preallocated", "in place"} {
		if !strings.Contains(out, label+" ") || !strings.Contains(out, "rel. error against kernels.matmul") {
			t.Errorf("no %s line in:\n%s", label, out)
		}
	}
}

// TestFusedChainAgreesThreeWays runs the five-step chain as separate
// kernels, as operators and as one kernels.map; the script asserts that
// each agrees with the fused kernel.
func TestFusedChainAgreesThreeWays(t *testing.T) {
	out := run(t, "fused.lua", []string{"1001", "2"})
	for _, label := range []string{"in place", "operators", "fused"} {
		if !strings.Contains(out, label+" ") {
			t.Errorf("no %s line in:\n%s", label, out)
		}
	}
	if !strings.Contains(out, "rel. error against fused") || !strings.Contains(out, "GB/s") {
		t.Errorf("no error or bandwidth column in:\n%s", out)
	}
}

// TestJITBenchLinesAreJSONAndItsKernelsAgree runs the kernel language's
// benchmark on the CPU backend, where its kernels run in the evaluator:
// every line it prints must be a JSON object, each kernel written in Lua
// must have been measured, and each of its checks against the built-in
// kernels must have passed.
func TestJITBenchLinesAreJSONAndItsKernelsAgree(t *testing.T) {
	out := run(t, filepath.Join("bench", "jit.lua"), nil)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON object: %q: %v", line, err)
		}
		bench, _ := m["bench"].(string)
		how, _ := m["how"].(string)
		seen[bench+" "+how] = true
		if ok, has := m["ok"]; has && ok != true {
			t.Errorf("a check failed: %s", line)
		}
		if _, has := m["ok"]; has {
			seen[bench+" "+how+" checked"] = true
		}
	}
	for _, want := range []string{
		"jit_first_launch kernels.map axpy", "jit_first_launch kernels.map chain", "jit_first_launch kernels.jit matmul",
		"jit_axpy kernels.axpy", "jit_axpy kernels.map checked",
		"jit_chain built-ins in place", "jit_chain kernels.map checked",
		"jit_matmul kernels.jit checked", "jit_matmul kernels.matmul",
		"jit_cache ", "graph100 eager", "graph100 cuda graph checked",
	} {
		if !seen[want] {
			t.Errorf("no %q line in:\n%s", want, out)
		}
	}
}
