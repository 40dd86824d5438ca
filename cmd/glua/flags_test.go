package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gluaproject/glua/config"
)

// These are the options added to lua's: --help, --timeout, --sandbox and
// --device, and the promise that every setting has a flag or a variable
// that --help and --info both show.

func TestHelpListsEveryOptionAndVariableOnALineEach(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		// --help needs no configuration: a broken one does not stop it.
		r := invocation{dir: t.TempDir(), args: []string{flag}, env: []string{"GLUA_CONFIG=/nonexistent.toml"}}.glua(t)
		expect(t, r, 0, "^"+regexp.QuoteMeta(usageLine)+"\n", "")
		var lines []string
		for _, opt := range luaOptions {
			lines = append(lines, regexp.QuoteMeta(opt[0])+" +"+regexp.QuoteMeta(opt[1]))
		}
		for _, opt := range longOptions {
			lines = append(lines, regexp.QuoteMeta(optionSyntax(opt))+" +"+regexp.QuoteMeta(opt.help))
		}
		for _, v := range config.Env {
			lines = append(lines, v+" +\\S")
		}
		for _, line := range lines {
			if !regexp.MustCompile(`(?m)^  ` + line).MatchString(r.stdout) {
				t.Errorf("glua %s has no line %s:\n%s", flag, line, r.stdout)
			}
		}
	}
}

// A rank waits a minute for another by default; --help says how to give a
// long first step more, so that nobody has to find the key in config.toml.
func TestHelpSaysHowToLengthenTheDistTimeout(t *testing.T) {
	r := runGlua(t, "--help")
	expect(t, r, 0, `(?m)^  GLUA_DIST_TIMEOUT +dist\.timeout: how long a rank waits for another before failing \(default 1m\); lengthen it for a long first step: GLUA_DIST_TIMEOUT=10m$`, "")
}

func TestHelpIsGroupedLuaOptionsGluaOptionsEnvironment(t *testing.T) {
	r := runGlua(t, "--help")
	lua := strings.Index(r.stdout, "Options, as lua5.1's:")
	glua := strings.Index(r.stdout, "glua's options")
	env := strings.Index(r.stdout, "Environment variables")
	if lua < 0 || glua < lua || env < glua || strings.Index(r.stdout, "-e stat") > glua || strings.Index(r.stdout, "--backend") > env {
		t.Errorf("--help is not in three groups:\n%s", r.stdout)
	}
}

// Walks config.toml: every key must be settable by a flag or a variable,
// and both --help and --info must say which.
func TestEveryConfigKeyHasAFlagOrVariableShownByHelpAndInfo(t *testing.T) {
	var v map[string]any
	md, err := toml.DecodeFile(filepath.Join("..", "..", "config.toml"), &v)
	if err != nil {
		t.Fatal(err)
	}
	help := runGlua(t, "--help").stdout
	info := runGlua(t, "--info")
	expect(t, info, 0, "configuration", "")
	keys := 0
	for _, k := range md.Keys() {
		if md.Type(k...) == "Hash" {
			continue
		}
		keys++
		key := k.String()
		env, flag := "", ""
		for _, ck := range config.Keys {
			if ck.Name == key {
				env = ck.Env
			}
		}
		for _, opt := range longOptions {
			if opt.key == key {
				flag = "--" + opt.name
			}
		}
		if env == "" && flag == "" {
			t.Errorf("config.toml's %s has neither a flag nor a variable", key)
			continue
		}
		for _, name := range []string{env, flag} {
			if name != "" && !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(name)+`\b`).MatchString(help) {
				t.Errorf("--help does not list %s, which sets %s", name, key)
			}
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + ` .* ` + env + `$`).MatchString(info.stdout) {
			t.Errorf("--info has no line for %s naming %s:\n%s", key, env, info.stdout)
		}
	}
	if keys < 18 {
		t.Errorf("found only %d keys in config.toml", keys)
	}
}

func TestUnknownOptionIsNamedWithAHintToHelp(t *testing.T) {
	r := runGlua(t, "--frobnicate", "-e", "print('not reached')")
	expect(t, r, 1, "", "^"+regexp.QuoteMeta("glua: unrecognized option '--frobnicate'\n"+usageLine+"\nTry 'glua --help' for the options and environment variables.\n")+"$")
}

func TestTimeoutStopsARunawayScriptNamingTheTimeout(t *testing.T) {
	start := time.Now()
	r := invocation{dir: "testdata", args: []string{"--timeout", "300ms", "runaway.lua"}}.glua(t)
	expect(t, r, 1, "", `^glua: runaway\.lua:\d: stopped after the 300ms --timeout\nstack traceback:\n\trunaway\.lua:\d: in main chunk\n`)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the script ran %v", d)
	}
	expect(t, runGlua(t, "--timeout", "1m", "-e", "print('in time')"), 0, "^in time\n$", "")
}

func TestTimeoutEndsAScriptStuckInAGoCall(t *testing.T) {
	// Opening a FIFO that no one writes blocks in the open call itself.
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	start := time.Now()
	r := invocation{dir: dir, args: []string{"--timeout", "200ms", "-e", `io.open("fifo")`}}.glua(t)
	expect(t, r, 1, "", `^glua: stopped after the 200ms --timeout \(it was inside a call that did not return\)\n$`)
	if d := time.Since(start); d > timeoutGrace+5*time.Second {
		t.Errorf("glua ended only after %v", d)
	}
}

func TestBadTimeoutIsNamedBeforeAnythingRuns(t *testing.T) {
	r := runGlua(t, "--timeout", "soon", "-e", "print('ran')")
	expect(t, r, 1, "", `^glua: --timeout: "soon" is not a duration \(try 30s, 1m30s or 2h\)\n$`)
}

func TestSandboxLeavesOutTheHostsFilesAndKeepsTracebacks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mymod.lua"), []byte("return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sandboxed := func(src string) result {
		return invocation{dir: dir, args: []string{"--sandbox", "-e", src}}.glua(t)
	}
	expect(t, sandboxed(`print(os, io, dofile, loadfile, debug, string.dump, require("cuda").backend())`), 0,
		"^nil\tnil\tnil\tnil\tnil\tnil\tcpu\n$", "")
	expect(t, sandboxed(`require("mymod")`), 1, "", `^glua: \(command line\):1: module 'mymod' not found:`)
	expect(t, sandboxed(`local function f() error("boom") end f()`), 1, "",
		`^glua: \(command line\):1: boom\nstack traceback:\n\t\[C\]: in function 'error'\n\t\(command line\):1: in function 'f'\n`)
	expect(t, invocation{dir: dir, args: []string{"-e", `print(require("mymod"))`}}.glua(t), 0, "^1\n$", "")
}

func TestSandboxedScriptCannotLiftTheHardLimitFlag(t *testing.T) {
	r := runGlua(t, "--sandbox", "--hard-limit", "64MiB", "-e", `local pool = require("pool")
		print(pcall(pool.set_limit, {hard = false}))
		pool.set_limit{hard = "32MiB"}
		pool.set_limit{hard = "64MiB"}
		print(pool.limits().hard)`)
	expect(t, r, 0, `^false\t\(command line\):2: pool\.set_limit: the sandbox cannot clear the hard limit: its ceiling is 64 MiB \(--hard-limit\); .*\n67108864\n$`, "")
	r = invocation{dir: t.TempDir(), env: []string{"GLUA_HARD_MEMORY_LIMIT=64MiB"}, args: []string{"--sandbox", "-e", `require("pool").set_limit{hard = "65MiB"}`}}.glua(t)
	expect(t, r, 1, "", `^glua: \(command line\):1: pool\.set_limit: hard limit 65 MiB is above the sandbox's ceiling of 64 MiB \(\$GLUA_HARD_MEMORY_LIMIT\)`)
}

func TestDeviceFlagChoosesTheDeviceAndTheCPUHasOnlyZero(t *testing.T) {
	expect(t, runGlua(t, "--device", "0", "-e", `print(require("cuda").device().index)`), 0, "^0\n$", "")
	want := `^glua: cpu: device 1: the CPU backend has only device 0 \(cuda\.device\)\n$`
	expect(t, runGlua(t, "--device", "1", "-e", "print('not reached')"), 1, "", want)
	expect(t, invocation{dir: t.TempDir(), env: []string{"GLUA_DEVICE=1"}, args: []string{"-e", "print('not reached')"}}.glua(t), 1, "", want)
	expect(t, runGlua(t, "--device", "one", "-e", "print('not reached')"), 1, "", `^glua: --device: "one" is not a whole number\n$`)
	expect(t, runGlua(t, "--device", "0", "--info"), 0, `(?m)^  cuda\.device +0 +--device +GLUA_DEVICE$`, "")
}

func TestReadmeDocumentsEveryOptionAndVariable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for _, opt := range longOptions {
		if !strings.Contains(readme, "| `"+optionSyntax(opt)) && !strings.Contains(readme, ", `"+optionSyntax(opt)) {
			t.Errorf("README.md's table of options lacks %s", optionSyntax(opt))
		}
	}
	for _, opt := range luaOptions {
		if !strings.Contains(readme, "| `"+opt[0]+"` |") {
			t.Errorf("README.md's table of options lacks %s", opt[0])
		}
	}
	for _, v := range config.Env {
		if !strings.Contains(readme, "| `"+v+"` |") {
			t.Errorf("README.md's table of variables lacks %s", v)
		}
	}
}

// TestWhatIsNotARegularFileIsRefusedAtOnce: a directory, /dev/zero or a
// FIFO as the script, the configuration or a file dofile, loadfile or
// require reads is an error at once, as lua5.1's "cannot read dir: Is a
// directory", never a read without end or a wait for a writer.
func TestWhatIsNotARegularFileIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "somedir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	start := time.Now()
	for script, want := range map[string]string{
		"somedir":   "cannot read somedir: Is a directory",
		"/dev/zero": "cannot read /dev/zero: not a regular file (a character device)",
		"fifo":      "cannot read fifo: not a regular file (a named pipe)",
	} {
		expect(t, invocation{dir: dir, args: []string{script}}.glua(t), 1, "", "^glua: "+regexp.QuoteMeta(want)+"\n$")
		expect(t, invocation{dir: dir, args: []string{"--config", script, "-e", "print(1)"}}.glua(t), 1, "", "^glua: config: "+regexp.QuoteMeta(want)+"\n$")
		expect(t, invocation{dir: dir, env: []string{"GLUA_CONFIG=" + script}, args: []string{"-e", "print(1)"}}.glua(t), 1, "", "^glua: config: "+regexp.QuoteMeta(want)+"\n$")
		r := invocation{dir: dir, args: []string{"-e", fmt.Sprintf(`package.path = "?"
			print(loadfile(%[1]q))
			print(pcall(dofile, %[1]q))
			print(pcall(require, %[1]q))`, script)}}.glua(t)
		q := regexp.QuoteMeta(want)
		s := regexp.QuoteMeta(script)
		expect(t, r, 0, "^nil\t"+q+"\nfalse\t"+q+"\nfalse\terror loading module '"+s+"' from file '"+s+"':\n\t"+q+"\n$", "")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("refusing took %v", d)
	}
}

// TestTimeoutStopsPatternMatchingAndKeepsTheProfile: --timeout stops a
// string.find that backtracks for a minute as it stops a Lua loop, with
// its own message and no forced exit, so --memory-profile is written.
func TestTimeoutStopsPatternMatchingAndKeepsTheProfile(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "mem.html")
	start := time.Now()
	r := invocation{dir: dir, args: []string{"--timeout", "500ms", "--memory-profile", page, "-e",
		`local x = require("cuda").zeros({16}); print(string.find(("a"):rep(40) .. "b", ("a*"):rep(40) .. "c"))`}}.glua(t)
	expect(t, r, 1, "", `^glua: \(command line\):1: stopped after the 500ms --timeout\nstack traceback:\n\t\[C\]: in function 'find'`)
	if d := time.Since(start); d >= timeoutGrace {
		t.Errorf("glua ended only after %v", d)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.HasPrefix(string(html), "<!DOCTYPE html>") {
		t.Errorf("the profile after the timeout: %.40q, %v", html, err)
	}
}
