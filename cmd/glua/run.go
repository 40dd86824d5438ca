package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/chzyer/readline"
	lua "github.com/yuin/gopher-lua"

	compat "github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/luac"
	"github.com/gluaproject/glua/internal/regularfile"
	"github.com/gluaproject/glua/runtime"
)

// progname prefixes every message, as argv[0] does in lua.c.
const progname = "glua"

// run is lua.c's pmain: read the options, print the version, run each -e
// and -l in order, then the script, then stdin or the REPL. It returns the
// exit status: 0, or 1 at the first error.
//
// A script's os.exit(n) does not come back here: gopher-lua calls os.Exit
// at once, as C's exit does for lua, so the runtime is not closed. That is
// safe because nothing is lost: output is written unbuffered, and the
// device memory and the CUDA context go with the process. What is skipped
// is only pool.debug's report of arrays still alive.
func run(argv []string) int {
	o, err := parseArgs(argv)
	if err != nil {
		message(err.Error())
		writeUsage(os.Stderr)
		return 1
	}
	if o.help {
		if err := writeHelp(os.Stdout); err != nil {
			return 1
		}
		return 0
	}
	// Before anything else runs: each rank does the rest itself.
	spec, err := o.nodes()
	if err != nil {
		message(err.Error())
		return 1
	}
	if spec.perNode > 1 || spec.nnodes > 1 {
		return launch(o, argv, spec)
	}
	if o.version {
		printVersion()
	}
	if o.runsNothing() {
		return 0
	}
	timeout, err := o.timeout()
	if err != nil {
		message(err.Error())
		return 1
	}
	cfg, err := o.configure(os.Getenv)
	if err != nil {
		message(err.Error())
		return 1
	}
	if !o.ignoreEnv {
		if err := rankDevice(&cfg, os.Getenv, runtime.DeviceCount); err != nil {
			message(err.Error())
			return 1
		}
	}
	rt, err := runtime.New(runtime.Options{Config: &cfg, Sandbox: o.sandbox})
	if err != nil {
		message(err.Error())
		return 1
	}
	if o.sandbox {
		keepTraceback(rt.Lua())
	}
	writeProfile, err := startProfile(rt, o, argv)
	if err != nil {
		message(err.Error())
		rt.Close()
		return 1
	}
	status := session(rt, o, argv, timeout)
	if err := writeProfile(); err != nil {
		message(err.Error())
		status = 1
	}
	if status != 0 {
		return closeFailed(rt, status)
	}
	if err := rt.Close(); err != nil {
		message(err.Error())
		status = 1
	}
	return status
}

// failedCloseGrace bounds how long a process whose script failed spends
// closing its runtime before it exits anyway.
const failedCloseGrace = 2 * time.Second

// closeFailed closes the runtime of a script that failed. Its groups are
// aborted first, so that the other ranks learn at once that this one is
// gone instead of waiting for it, and the close is bounded: a rank of a
// job must end, so that its launcher sees it end and stops the others,
// whatever a communicator's teardown would wait for. Exiting frees the
// device's memory and context all the same.
func closeFailed(rt *runtime.Runtime, status int) int {
	closed := make(chan error, 1)
	go func() {
		err := rt.AbortComms()
		closed <- errors.Join(err, rt.Close())
	}()
	select {
	case err := <-closed:
		if err != nil {
			message(err.Error())
		}
	case <-time.After(failedCloseGrace):
		message(fmt.Sprintf("closing the runtime took more than %v after the error; exiting without it", failedCloseGrace))
	}
	return status
}

// session does what the command line asks of a started runtime.
func session(rt *runtime.Runtime, o options, argv []string, timeout time.Duration) int {
	L := rt.Lua()
	if o.ignoreEnv {
		// gopher-lua took package.path from $LUA_PATH when the state was
		// made; -E means the built-in path, as it does for lua.
		if pkg, ok := L.GetGlobal("package").(*lua.LTable); ok {
			pkg.RawSetString("path", lua.LString(lua.LuaPathDefault))
		}
	}
	if o.info {
		if err := rt.WriteInfo(os.Stdout); err != nil {
			message(err.Error())
			return 1
		}
	}
	if err := runBatch(rt, o, argv, timeout); err != nil {
		return report(err)
	}
	if o.interactive {
		return repl(rt)
	}
	if o.runsStdin() && readline.IsTerminal(int(os.Stdin.Fd())) {
		printVersion()
		return repl(rt)
	}
	return 0
}

// runBatch runs what is not interactive, under the --timeout: each -e and
// -l in order, then the script, or stdin when it is not a terminal.
func runBatch(rt *runtime.Runtime, o options, argv []string, timeout time.Duration) error {
	if timeout > 0 {
		ctx, cancel := context.WithTimeoutCause(context.Background(), timeout,
			fmt.Errorf("stopped after the %s --timeout", timeout))
		defer cancel()
		rt.SetContext(ctx)
		defer rt.SetContext(nil)
		defer endLate(ctx, timeoutGrace)()
	}
	L := rt.Lua()
	for _, s := range o.steps {
		var err error
		if s.option == 'e' {
			err = doString(L, s.value, "=(command line)")
		} else {
			err = doLibrary(L, s.value)
		}
		if err != nil {
			return err
		}
	}
	if o.script > 0 {
		return doScript(L, argv, o.script)
	}
	if o.runsStdin() && !readline.IsTerminal(int(os.Stdin.Fd())) {
		return doFile(L, "")
	}
	return nil
}

// timeoutGrace is how long past its --timeout a script may stay inside
// one Go call before the process ends anyway.
const timeoutGrace = 3 * time.Second

// endLate ends the process when ctx has been done for grace and the
// returned stop has not been called: a script inside one long Go call (a
// large product on the CPU, a read from a terminal) runs no Lua
// instruction at which the deadline could stop it.
func endLate(ctx context.Context, grace time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		select {
		case <-done:
		case <-time.After(grace):
			message(fmt.Sprintf("%v (it was inside a call that did not return)", context.Cause(ctx)))
			os.Exit(1)
		}
	}()
	return func() { close(done) }
}

func message(msg string) {
	fmt.Fprintf(os.Stderr, "%s: %s\n", progname, msg)
}

// printVersion writes the banner to stderr, where lua 5.1 writes it.
func printVersion() {
	fmt.Fprintf(os.Stderr, "%s %s (Lua 5.1 via gopher-lua%s)\n", progname, version, gopherLuaVersion())
}

// gopherLuaVersion is " v1.1.2", or "" when the binary carries no module
// information.
func gopherLuaVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/yuin/gopher-lua" {
				return " " + dep.Version
			}
		}
	}
	return ""
}

// report prints an error as lua.c's report does and returns the exit
// status.
func report(err error) int {
	msg, ok := errorMessage(err)
	if ok {
		message(msg)
	}
	tellLauncher(msg)
	return 1
}

// errorMessage is what lua.c prints for an error: nothing for an error
// value of nil (`error()`), a placeholder for one that is not a string,
// not a Go representation.
func errorMessage(err error) (string, bool) {
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) {
		return err.Error(), true
	}
	switch v := apiErr.Object.(type) {
	case *lua.LNilType:
		return "", false
	case lua.LString, lua.LNumber:
		msg := v.String()
		// gopher-lua attaches its own traceback only when the message
		// handler could not run, as after a stack overflow.
		if apiErr.StackTrace != "" {
			msg += "\n" + apiErr.StackTrace
		}
		return msg, true
	}
	return "(error object is not a string)", true
}

// doScript runs the script at argv[n] with the rest of argv as its
// arguments, after setting the global arg as lua.c does: arg[0] is the
// script, arg[1..] its arguments, and the interpreter and its options sit
// at negative indices.
func doScript(L *lua.LState, argv []string, n int) error {
	args := L.CreateTable(len(argv)-n-1, n+1)
	for i, a := range argv {
		args.RawSetInt(i-n, lua.LString(a))
	}
	L.SetGlobal("arg", args)
	name := argv[n]
	if name == "-" && argv[n-1] != "--" {
		name = ""
	}
	fn, err := loadFile(L, name)
	if err != nil {
		return err
	}
	L.Push(fn)
	for _, a := range argv[n+1:] {
		L.Push(lua.LString(a))
	}
	return call(L, len(argv)-n-1, 0)
}

// doFile runs a file, or stdin when name is "".
func doFile(L *lua.LState, name string) error {
	fn, err := loadFile(L, name)
	if err != nil {
		return err
	}
	L.Push(fn)
	return call(L, 0, 0)
}

func doString(L *lua.LState, source, chunkName string) error {
	fn, err := load(L, []byte(source), chunkName)
	if err != nil {
		return err
	}
	L.Push(fn)
	return call(L, 0, 0)
}

// doLibrary is -l: require(name), as lua does. Like lua 5.2 and later it
// also sets the global name to the module when the module did not set one
// itself, so that `glua -l cuda -e 'print(cuda.backend())'` works.
func doLibrary(L *lua.LState, name string) error {
	L.Push(L.GetGlobal("require"))
	L.Push(lua.LString(name))
	if err := call(L, 1, 1); err != nil {
		return err
	}
	mod := L.Get(-1)
	L.Pop(1)
	if mod != lua.LNil && mod != lua.LTrue && L.GetGlobal(name) == lua.LNil {
		L.SetGlobal(name, mod)
	}
	return nil
}

// call is lua.c's docall: a protected call whose error carries a traceback
// taken where the error was raised.
func call(L *lua.LState, nargs, nret int) error {
	return compat.PCall(L, nargs, nret, L.NewFunction(traceback))
}

// traceback is lua.c's message handler: it appends debug.traceback to a
// string message and leaves any other error value alone. It calls the
// script's debug.traceback, so a script that removes it gets bare messages,
// as with lua; a sandbox, which has no debug library, gets keepTraceback's.
func traceback(L *lua.LState) int {
	msg := L.Get(1)
	switch v := msg.(type) {
	case lua.LString:
	case lua.LNumber:
		msg = lua.LString(v.String())
	default:
		// A value with __tostring is shown by it, as by lua 5.2 and later;
		// lua 5.1 would say only that it is not a string.
		if L.GetMetaField(msg, "__tostring") == lua.LNil {
			return 1
		}
		msg = L.ToStringMeta(msg)
	}
	tb, ok := L.G.Registry.RawGetString(tracebackKey).(*lua.LFunction)
	if dbg, isTable := L.GetGlobal("debug").(*lua.LTable); isTable {
		tb, ok = dbg.RawGetString("traceback").(*lua.LFunction)
	}
	if !ok {
		L.Push(msg)
		return 1
	}
	L.Push(tb)
	L.Push(msg)
	L.Push(lua.LNumber(2)) // skip this handler and traceback itself
	L.Call(2, 1)
	return 1
}

// tracebackKey holds, in the registry of a state without a debug library
// (--sandbox), the traceback the message handler uses instead.
const tracebackKey = "glua.traceback"

// keepTraceback gives errors in a sandboxed state the traceback that its
// missing debug library would have given: Lua 5.1's debug.traceback, taken
// from a scratch state, out of the script's reach.
func keepTraceback(L *lua.LState) {
	scratch := lua.NewState()
	defer scratch.Close()
	compat.Open(scratch)
	if tb, ok := scratch.GetField(scratch.GetGlobal("debug"), "traceback").(*lua.LFunction); ok {
		L.G.Registry.RawSetString(tracebackKey, L.NewFunction(tb.GFunction))
	}
}

// loadFile compiles a file, or stdin when name is "", as luaL_loadfile
// does: a first line starting with # (a Unix "#!" line) is skipped but
// still counted, so line numbers in messages match the file.
func loadFile(L *lua.LState, name string) (*lua.LFunction, error) {
	var src []byte
	var err error
	chunkName := "@" + name
	if name == "" {
		chunkName = "=stdin"
		if src, err = io.ReadAll(os.Stdin); err != nil {
			return nil, fmt.Errorf("cannot read stdin: %s", compat.Strerror(err))
		}
	} else {
		f, err := regularfile.Open(name)
		var notRegular *regularfile.Error
		if errors.As(err, &notRegular) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("cannot open %s: %s", name, compat.Strerror(err))
		}
		src, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %s", name, compat.Strerror(err))
		}
	}
	if bytes.HasPrefix(src, []byte("#")) {
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			src = src[i:]
		} else {
			src = nil
		}
	}
	return load(L, src, chunkName)
}

// load compiles source as lua.c does a script, chunkName given as Lua
// 5.1 takes it ("@file", "=stdin", "=(command line)"). A syntax error's
// message is already lua's (`name:line: message near 'token'`); it comes
// back without gopher-lua's stack trace.
func load(L *lua.LState, src []byte, chunkName string) (*lua.LFunction, error) {
	fn, err := luac.LoadChunk(L, src, chunkName, luac.FileLevels)
	if err != nil {
		return nil, syntaxError(err)
	}
	return fn, nil
}

// syntaxError is a load error as lua prints it: luac's message is already
// lua's, with the chunk named as lua names it.
func syntaxError(err error) error {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		return errors.New(apiErr.Object.String())
	}
	return err
}
