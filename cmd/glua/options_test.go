package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// These are glua's own options, which lua does not have: the backend, the
// pool, its limits, --info, the configuration file and the environment.

func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "glua.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// expect checks a run's exit status and that its stdout and stderr match
// the patterns ("" means empty).
func expect(t *testing.T, r result, code int, stdout, stderr string) {
	t.Helper()
	ok := r.code == code
	for _, c := range []struct{ got, pattern string }{{r.stdout, stdout}, {r.stderr, stderr}} {
		if c.pattern == "" {
			ok = ok && c.got == ""
		} else {
			ok = ok && regexp.MustCompile(c.pattern).MatchString(c.got)
		}
	}
	if !ok {
		t.Errorf("want exit %d, stdout matching %q, stderr matching %q; got\n%v", code, stdout, stderr, r)
	}
}

const showSettings = `local pool = require("pool")
local limits = pool.limits()
print(require("cuda").backend(), pool.strategy(), limits.soft, limits.hard)`

func TestOptionsChooseBackendPoolAndLimits(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"defaults", nil, nil, "cpu\tcaching\tfalse\tfalse\n"},
		{"--backend cpu", []string{"--backend", "cpu"}, nil, "cpu\tcaching\tfalse\tfalse\n"},
		{"--pool none", []string{"--pool", "none"}, nil, "cpu\tnone\tfalse\tfalse\n"},
		{"--pool=caching over the environment", []string{"--pool=caching"}, []string{"GLUA_MEMORY_POOL=none"}, "cpu\tcaching\tfalse\tfalse\n"},
		{"limits as sizes", []string{"--soft-limit", "1MiB", "--hard-limit", "2MiB"}, nil, "cpu\tcaching\t1048576\t2097152\n"},
		{"limits as percentages of the CPU capacity", []string{"--cpu-memory", "4GiB", "--soft-limit", "25%", "--hard-limit=50%"}, []string{}, "cpu\tcaching\t1073741824\t2147483648\n"},
		{"GLUA_CPU_MEMORY sets the CPU capacity", []string{"--hard-limit=50%"}, []string{"GLUA_CPU_MEMORY=2GiB"}, "cpu\tcaching\tfalse\t1073741824\n"},
		{"--cpu-memory over GLUA_CPU_MEMORY", []string{"--cpu-memory=1GiB", "--hard-limit=50%"}, []string{"GLUA_CPU_MEMORY=2GiB"}, "cpu\tcaching\tfalse\t536870912\n"},
		{"the environment sets what flags do not", []string{"--soft-limit", "1MiB"}, []string{"GLUA_MEMORY_POOL=none", "GLUA_HARD_MEMORY_LIMIT=3MiB"}, "cpu\tnone\t1048576\t3145728\n"},
		{"-E ignores the environment", []string{"-E", "--backend", "cpu"}, []string{"GLUA_MEMORY_POOL=none", "GLUA_HARD_MEMORY_LIMIT=lots", "GLUA_CONFIG=/nonexistent.toml"}, "cpu\tcaching\tfalse\tfalse\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, tc.args...), "-e", showSettings)
			r := invocation{dir: t.TempDir(), args: args, env: tc.env}.glua(t)
			expect(t, r, 0, "^"+regexp.QuoteMeta(tc.want)+"$", "")
		})
	}
}

func TestHardLimitStopsAnAllocationTheDeviceCouldHold(t *testing.T) {
	r := runGlua(t, "--hard-limit", "1MiB", "-e", `
		local cuda = require("cuda")
		local ok, err = pcall(cuda.zeros, {1024, 1024})
		print(ok, err)
		local small = cuda.zeros({256, 256})
		print(small.nbytes)`)
	expect(t, r, 0, `^false\t.*cuda\.zeros: .*hard limit 1\.00 MiB.*\n262144\n$`, "")
}

func TestEmptyHardLimitFlagClearsTheFilesLimit(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "[pool]\nhard_limit = \"1MiB\"\n")
	alloc := `print(require("cuda").zeros({1024, 1024}).nbytes)`
	expect(t, runGlua(t, "--config", file, "-e", alloc), 1, "", `hard limit 1\.00 MiB`)
	expect(t, runGlua(t, "--config", file, "--hard-limit", "", "-e", alloc), 0, "^4194304\n$", "")
}

func TestAutoBackendSaysWhatItChose(t *testing.T) {
	r := runGlua(t, "--backend", "auto", "--info", "-e", `print("using " .. require("cuda").backend())`)
	if r.code != 0 {
		t.Fatalf("glua --backend auto failed:\n%v", r)
	}
	switch {
	case strings.Contains(r.stdout, "using cuda"):
		expect(t, r, 0, `(?m)^backend: cuda \(auto: a CUDA device is present\)$`, "")
	case strings.Contains(r.stdout, "using cpu"):
		expect(t, r, 0, `(?m)^backend: cpu \(auto: no usable CUDA device \(.*libcuda.*\); using the CPU backend\)$`, "")
	default:
		t.Errorf("no backend reported:\n%v", r)
	}
}

func TestCUDABackendWithoutDriverIsAClearError(t *testing.T) {
	probe := runGlua(t, "--backend", "auto", "-e", `io.write(require("cuda").backend())`)
	if probe.stdout == "cuda" {
		t.Skip("this machine has a CUDA device")
	}
	r := invocation{dir: t.TempDir(), args: []string{"--backend", "cuda", "-e", "print('not reached')"}}.run(t, gluaBin, "glua")
	expect(t, r, 1, "", `^glua: cuda: .*libcuda\.so\.1.*\n$`)
}

func TestInfoShowsDeviceBackendPoolAndConfiguration(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "[pool]\nsoft_limit = \"64MiB\"\n[cpu]\nmemory = \"2GiB\"\n")
	r := runGlua(t, "--config", file, "--hard-limit", "1GiB", "--info")
	for _, want := range []string{
		`(?m)^backend: cpu \(cpu: chosen by configuration\)$`,
		`(?m)^device 0: `,
		`(?m)^  memory: .* of 2\.0 GiB$`,
		`(?m)^pool: strategy caching, soft limit 64 MiB, hard limit 1\.0 GiB$`,
		`(?m)^configuration \(from ` + regexp.QuoteMeta(file) + `, with environment and flags applied\):$`,
		`(?m)^  pool\.hard_limit +"1GiB" +--hard-limit +GLUA_HARD_MEMORY_LIMIT$`,
		`(?m)^  pool\.soft_limit +"64MiB" +file +GLUA_SOFT_MEMORY_LIMIT$`,
		`(?m)^  cuda\.libcublas +\["libcublas\.so`,
		`(?m)^  cuda\.libnccl +\["libnccl\.so\.2", "libnccl\.so"\] +\w+ +GLUA_LIBNCCL$`,
	} {
		expect(t, r, 0, want, "")
	}
}

func TestInfoAloneDoesNotReadStdin(t *testing.T) {
	r := invocation{dir: t.TempDir(), args: []string{"--info"}, stdin: "print('from stdin')\n"}.glua(t)
	if r.code != 0 || strings.Contains(r.stdout, "from stdin") {
		t.Errorf("glua --info ran stdin or failed:\n%v", r)
	}
}

func TestConfigErrorsNameFileKeyAndValue(t *testing.T) {
	dir := t.TempDir()
	lots := writeConfig(t, dir, "[pool]\nhard_limit = \"lots\"\n")
	cases := []struct {
		name string
		inv  invocation
		want string // the whole of stderr
	}{
		{"--config", invocation{args: []string{"--config", lots, "-e", "print(1)"}},
			`glua: config ` + lots + `: pool.hard_limit: "lots" is not a size (try 1073741824, "512MiB" or "1.5GiB")`},
		{"GLUA_CONFIG", invocation{args: []string{"-e", "print(1)"}, env: []string{"GLUA_CONFIG=" + lots}},
			`glua: config ` + lots + `: pool.hard_limit: "lots" is not a size (try 1073741824, "512MiB" or "1.5GiB")`},
		{"environment variable", invocation{args: []string{"-e", "print(1)"}, env: []string{"GLUA_HARD_MEMORY_LIMIT=lots"}},
			`glua: config: $GLUA_HARD_MEMORY_LIMIT: "lots" is not a size (try 1073741824, "512MiB" or "1.5GiB")`},
		{"flag", invocation{args: []string{"--hard-limit", "lots", "-e", "print(1)"}},
			`glua: --hard-limit: "lots" is not a size (try 1073741824, "512MiB" or "1.5GiB")`},
		{"bad backend flag", invocation{args: []string{"--backend=gpu", "x.lua"}},
			`glua: --backend: "gpu" is not one of auto, cuda, cpu`},
		{"missing --config file", invocation{args: []string{"--config", filepath.Join(dir, "none.toml"), "-e", "print(1)"}},
			`glua: config: stat ` + filepath.Join(dir, "none.toml") + `: no such file or directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.inv.dir = dir
			expect(t, tc.inv.glua(t), 1, "", "^"+regexp.QuoteMeta(tc.want)+"\n$")
		})
	}
}

func TestUnknownConfigKeyIsNamed(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "[pool]\nhardlimit = \"1GiB\"\n")
	r := runGlua(t, "--config", file, "-e", "print(1)")
	expect(t, r, 1, "", "^"+regexp.QuoteMeta("glua: config "+file+": unknown key pool.hardlimit")+"\n$")
}

func TestConfigTomlInTheWorkingDirectoryIsRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[pool]\nstrategy = \"none\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := invocation{dir: dir, args: []string{"-e", `print(require("pool").strategy())`}}.glua(t)
	expect(t, r, 0, "^none\n$", "")
	r = invocation{dir: dir, args: []string{"--info"}}.glua(t)
	expect(t, r, 0, `(?m)^configuration \(from config\.toml,`, "")
}

func TestMinusEIgnoresLuaPath(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "mylib.lua"), []byte("return 'mylib found'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"LUA_PATH=" + filepath.Join(lib, "?.lua")}
	req := `print((pcall(require, "mylib")))`
	expect(t, invocation{dir: dir, env: env, args: []string{"-e", req}}.glua(t), 0, "^true\n$", "")
	expect(t, invocation{dir: dir, env: env, args: []string{"-E", "--backend", "cpu", "-e", req}}.glua(t), 0, "^false\n$", "")
}

func TestMinusLSetsTheModuleGlobal(t *testing.T) {
	r := runGlua(t, "-l", "cuda", "-l", "pool", "-e", "print(cuda.backend(), pool.strategy())")
	expect(t, r, 0, "^cpu\tcaching\n$", "")
}

func TestVersionNeedsNoConfiguration(t *testing.T) {
	r := runGlua(t, "--config", "/nonexistent.toml", "-v")
	expect(t, r, 0, "", `^glua \d+\.\d+\.\d+ \(Lua 5\.1 via gopher-lua v\d+\.\d+\.\d+\)\n$`)
}

func TestErrorFromAGluaModuleHasATraceback(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad_shape.lua")
	src := "local cuda = require('cuda')\nlocal function make()\n  return cuda.zeros('wide')\nend\nmake()\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := invocation{dir: dir, args: []string{"bad_shape.lua"}}.glua(t)
	expect(t, r, 1, "", `^glua: bad_shape\.lua:3: cuda\.zeros: bad argument #1 .*\nstack traceback:\n\t\[C\]: in function 'zeros'\n\tbad_shape\.lua:3: in function 'make'\n\tbad_shape\.lua:5: in main chunk\n`)
}

func TestOSExitKeepsItsStatusWithArraysAlive(t *testing.T) {
	r := runGlua(t, "-e", `x = require("cuda").zeros({64, 64}) print("allocated") os.exit(5)`)
	expect(t, r, 5, "^allocated\n$", "")
}

func TestPoolDebugReportsArraysAliveAtExit(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "[pool]\ndebug = true\n")
	r := runGlua(t, "--config", file, "-e", `kept = require("cuda").zeros({4, 4}) print("done")`)
	expect(t, r, 1, "^done\n$", `(?m)^glua: 1 array still alive at close:\n\s+float32\[4x4\] 64 B allocated at \(command line\):1`)
}

func TestCPUOutOfMemoryNamesTheCapacitySetting(t *testing.T) {
	r := runGlua(t, "--cpu-memory", "64MiB", "-e", `print(pcall(require("cuda").zeros, {1024, 1024, 32}))`)
	expect(t, r, 0, `^false\t.*out of CPU backend memory: tried to allocate 128\.00 MiB.*\[cpu\] memory = "64MiB".*GLUA_CPU_MEMORY.*--cpu-memory\)\n$`, "")
}
