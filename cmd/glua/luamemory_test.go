package main

import (
	"strings"
	"testing"
	"time"
)

// A sandboxed script asking for 16 GiB gets an error it catches, and the
// process goes on. (The count is a C int, as in Lua 5.1, where
// string.rep("x", 2^36) is "".)
func TestSandboxedStringRepOf16GiBIsACatchableError(t *testing.T) {
	r := runGlua(t, "--sandbox", "-e", `print(pcall(string.rep, "01234567", 2^31 - 1)) print("alive")`)
	want := "false\tnot enough memory: 16 GiB more would pass the Lua memory limit of 1.0 GiB"
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || !strings.HasSuffix(r.stdout, "\nalive\n") {
		t.Errorf("%v\nwant %q... then alive", r, want)
	}
}

func TestLuaMemoryLimitFlagAndVariableStopGrowthWithoutEndingTheProcess(t *testing.T) {
	script := `
		print(pcall(function() local s = "x" while true do s = s .. s end end))
		print(pcall(function() local t = {} while true do t[#t + 1] = {} end end))
		local n = 0
		local function nest() n = n + 1 if n < 60000 then coroutine.wrap(nest)() end end
		print(pcall(nest))
		print("alive")`
	for _, inv := range []invocation{
		{args: []string{"--lua-memory-limit", "48MiB", "-e", script}},
		{args: []string{"-e", script}, env: []string{"GLUA_LUA_MEMORY_LIMIT=48MiB"}},
	} {
		inv.dir = t.TempDir()
		r := inv.glua(t)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 4 || lines[3] != "alive" {
			t.Fatalf("%v", r)
		}
		for _, line := range lines[:2] {
			if !strings.HasPrefix(line, "false\tnot enough memory: ") || !strings.Contains(line, "Lua memory limit of 48 MiB") {
				t.Errorf("%q, want a memory error naming the 48 MiB limit", line)
			}
		}
		if !strings.HasPrefix(lines[2], "false\t") || !strings.HasSuffix(lines[2], "C stack overflow") {
			t.Errorf("60,000 nested coroutines: %q, want C stack overflow", lines[2])
		}
	}
}

func TestTimeoutEndsLongLibraryCallsPromptly(t *testing.T) {
	for name, script := range map[string]string{
		"string.rep": `local s = string.rep("abc", 4e8)`,
		"table.sort": `local t = {} for i = 1, 2e6 do t[i] = (i * 7919) % 2e6 end table.sort(t)`,
		"loadstring": `loadstring(("x = 1 "):rep(4e6))`,
	} {
		start := time.Now()
		r := runGlua(t, "--timeout", "300ms", "-e", script)
		took := time.Since(start)
		if r.code != 1 || !strings.Contains(r.stderr, "stopped after the 300ms --timeout") {
			t.Errorf("%s: %v", name, r)
		}
		// The forced exit would come 3 s after the deadline.
		if took > 2*time.Second {
			t.Errorf("%s: ended after %v", name, took)
		}
	}
}
