package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The REPL is driven in a real terminal (see terminal_test.go), as a person
// uses it: readline's editing, history and completion need one.

// replWait bounds each wait for the screen; generous, since the race
// detector or a busy machine slows everything.
const replWait = 15 * time.Second

// capture-pane leaves out the spaces that end a line, so a prompt shows
// as ">" and ">>".

// startREPL runs glua with args in a terminal, with a home of its own
// (where the history file goes) unless env gives HOME, and waits for the
// first prompt.
func startREPL(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	env = append([]string{"HOME=" + t.TempDir()}, env...)
	term := startTerminal(t, 120, 40, gluaCommand(env, args...))
	term.waitFor(`(?m)^>$`, replWait)
	return term
}

// output waits for a line matching pattern after the last time line was
// typed at the prompt.
func (term *terminal) after(line, pattern string) string {
	term.t.Helper()
	return term.waitFor(`(?s)> `+regexp.QuoteMeta(line)+`\n.*`+pattern, replWait)
}

func TestREPLBannerNamesVersionBackendAndDevice(t *testing.T) {
	term := startREPL(t, nil)
	s := term.screen()
	if !regexp.MustCompile(`(?m)^glua \d+\.\d+\.\d+ \(Lua 5\.1 via gopher-lua v[\d.]+\)\nbackend cpu, device 0: CPU \(\d+ threads\), .*cuda, kernels, pool, batch, dist are globals\n>$`).MatchString(s) {
		t.Errorf("banner:\n%s", s)
	}
}

func TestREPLPrintsWhatAnExpressionGives(t *testing.T) {
	term := startREPL(t, nil)
	term.enter("1+1")
	term.after("1+1", `(?m)^2\n>$`)
	term.enter("= 2, 'three'")
	term.after("= 2, 'three'", `(?m)^2\s+three\n>$`)
	term.enter("x = cuda.to_device({1, 2, 3})")
	term.enter("x")
	term.after("x", `(?m)^DeviceArray<float32>\[3\] 12 B\n\[1\., 2\., 3\.\]\n>$`)
	term.enter("print('side effect')")
	s := term.after("print('side effect')", `(?m)^side effect\n>$`)
	if strings.Contains(s, "side effect\nnil") {
		t.Errorf("a call that returns nothing printed a value:\n%s", s)
	}
}

func TestREPLContinuesAnIncompleteStatement(t *testing.T) {
	term := startREPL(t, nil)
	term.enter("for i = 1, 2 do")
	term.waitFor(`(?m)^> for i = 1, 2 do\n>>$`, replWait)
	term.enter("print('i is', i) end")
	term.waitFor(`(?m)^>> print\('i is', i\) end\ni is\s+1\ni is\s+2\n>$`, replWait)
	term.enter("1 +")
	term.enter("41")
	term.waitFor(`(?m)^> 1 \+\n>> 41\n42\n>$`, replWait)
}

func TestREPLKeepsHistoryBetweenSessions(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home}
	first := startREPL(t, env)
	first.enter("answer = 41 + 1")
	first.keys("C-d")
	history := filepath.Join(home, ".glua_history")
	waitForFile(t, history, "answer = 41 + 1\n")
	second := startREPL(t, env)
	second.keys("Up")
	second.waitFor(`(?m)^> answer = 41 \+ 1$`, replWait)
	second.keys("Enter")
	second.enter("answer")
	second.after("answer", `(?m)^42\n>$`)
}

// waitForFile waits until the file at path holds want.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	if !fileHolds(path, want, replWait) {
		data, _ := os.ReadFile(path)
		t.Fatalf("%s holds %q, want %q", path, data, want)
	}
}

// fileHolds says whether the file at path comes to hold want in timeout.
func fileHolds(path, want string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, _ := os.ReadFile(path); string(data) == want {
			return true
		}
	}
	return false
}

func TestREPLCompletesGlobalsFieldsAndMethods(t *testing.T) {
	term := startREPL(t, nil)
	term.typeText("cuda.to_")
	term.keys("Tab")
	term.waitFor(`(?m)^> cuda\.to_device$`, replWait)
	term.enter("({1, 2, 3})")
	term.enter("x = cuda.zeros({2, 2})")
	term.typeText("x:copy")
	term.keys("Tab", "Tab")
	s := term.waitFor(`(?m)^> x:copy_$`, replWait)
	s = term.waitFor(`copy_from +copy_to_host`, replWait)
	if strings.Contains(s, "copy_from  ") && strings.Contains(s, "nbytes") {
		t.Errorf("fields offered after ':':\n%s", s)
	}
	term.keys("C-c", "C-c") // the first leaves the list of candidates
	term.typeText("kern")
	term.keys("Tab")
	term.waitFor(`(?m)^> kernels$`, replWait)
}

func TestREPLCtrlCInterruptsAStatementAndKeepsTheArrays(t *testing.T) {
	term := startREPL(t, nil)
	term.enter("x = cuda.to_device({1, 2, 3})")
	term.enter("while true do end")
	time.Sleep(300 * time.Millisecond)
	term.keys("C-c")
	term.waitFor(`(?m)^(\^C)?stdin:1: interrupted!\nstack traceback:\n`, replWait)
	term.waitFor(`(?m)^>$`, replWait)
	term.enter("print(x:to_table()[2])")
	term.after("print(x:to_table()[2])", `(?m)^2\n>$`)
}

func TestREPLCtrlCAtThePromptClearsTheLine(t *testing.T) {
	term := startREPL(t, nil)
	term.typeText("error('never run')")
	term.keys("C-c")
	term.waitFor(`(?m)^> error\('never run'\)\^C\n>$`, replWait)
	// In a continued statement, Ctrl-C drops the statement too.
	term.enter("for i = 1, 2 do")
	term.keys("C-c")
	term.enter("print('fresh')")
	s := term.after("print('fresh')", `(?m)^fresh\n>$`)
	if strings.Contains(s, "stdin:1: never run") || strings.Contains(s, ">> print") {
		t.Errorf("an interrupted line ran or was continued:\n%s", s)
	}
}

func TestREPLCtrlDExitsWithStatusZero(t *testing.T) {
	home := t.TempDir()
	status := filepath.Join(home, "status")
	term := startTerminal(t, 120, 20, gluaCommand([]string{"HOME=" + home})+"; echo $? > "+shellQuote(status)+"; sleep 60")
	term.waitFor(`(?m)^>$`, replWait)
	term.enter("x = 1")
	term.keys("C-d")
	if !fileHolds(status, "0\n", replWait) {
		t.Fatalf("glua did not exit with status 0 after Ctrl-D:\n%s", term.screen())
	}
}

func TestREPLGoesOnAfterErrors(t *testing.T) {
	term := startREPL(t, nil)
	term.enter("x = = 1")
	term.after("x = = 1", `(?m)^stdin:1: .* near '='\n>$`)
	term.enter("error('boom')")
	term.after("error('boom')", `(?m)^stdin:1: boom\nstack traceback:\n\s+\[C\]: in function 'error'\n\s+stdin:1: in main chunk\n`)
	term.enter("cuda.zeros('wide')")
	term.after("cuda.zeros('wide')", `(?m)^stdin:1: cuda\.zeros: bad argument #1`)
	term.enter("print('still here')")
	term.after("print('still here')", `(?m)^still here\n>$`)
}

func TestREPLTakesAPastedBlockAndALongLine(t *testing.T) {
	term := startREPL(t, nil)
	term.typeText("total = 0\nfor i = 1, 4 do\n  total = total + i\nend\nprint('total', total)\n")
	term.waitFor(`(?m)^total\s+10\n>$`, replWait)
	long := "#'" + strings.Repeat("x", 3000) + "'"
	term.enter(long)
	term.waitFor(`(?m)^3000\n>$`, replWait)
}

func TestREPLWithAnUnwritableHistoryWarnsAndWorks(t *testing.T) {
	dir := t.TempDir() // a directory cannot be written as a file, even by root
	term := startTerminal(t, 250, 20, gluaCommand([]string{"HOME=" + t.TempDir(), "GLUA_REPL_HISTORY=" + dir}))
	term.waitFor(`(?m)^glua: warning: history file `+regexp.QuoteMeta(dir)+`: Is a directory; history will not be kept`, replWait)
	term.waitFor(`(?m)^>$`, replWait)
	term.enter("1+1")
	term.after("1+1", `(?m)^2\n>$`)
}

func TestREPLAfterAScriptWithMinusI(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "setup.lua")
	if err := os.WriteFile(script, []byte("greeting = 'hello from ' .. arg[0]:match('[^/]+$')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	term := startREPL(t, nil, "-i", script)
	term.enter("greeting")
	term.after("greeting", `(?m)^hello from setup\.lua\n>$`)
}

// Without a terminal, -i reads statements from stdin as lua5.1 does,
// writing each after its prompt.
func TestInteractiveReadsStatementsFromAPipe(t *testing.T) {
	r := invocation{dir: t.TempDir(), args: []string{"-i", "-e", "x = 20"},
		stdin: "x + 1\nfor i = 1, 2 do\nprint(i) end\nerror('oops')\nprint('after')\n"}.glua(t)
	wantOut := "> x + 1\n21\n> for i = 1, 2 do\n>> print(i) end\n1\n2\n> error('oops')\n> print('after')\nafter\n> \n"
	expect(t, r, 0, "^"+regexp.QuoteMeta(wantOut)+"$", `(?m)^stdin:1: oops\nstack traceback:\n`)
}
