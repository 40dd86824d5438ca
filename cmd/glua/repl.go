package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/config"
	compat "github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/runtime"
)

// replGlobals are the modules the REPL binds as globals, so that a session
// can start with cuda.zeros(...) without a require.
var replGlobals = []string{"cuda", "kernels", "pool", "batch", "dist"}

// repl is lua.c's dotty with Lua 5.3's printing of expressions: it reads
// statements until end of input, runs each, prints what it returns, and
// carries on after an error. It returns the exit status, 0.
func repl(rt *runtime.Runtime) int {
	L := rt.Lua()
	bindGlobals(L)
	printBanner(rt)
	r := &console{rt: rt, L: L, interrupts: newInterrupter()}
	defer r.interrupts.close()
	in, err := newLineReader(rt.Config(), &completer{L: L, busy: &r.busy})
	if err != nil {
		message(err.Error())
		return 1
	}
	defer in.close()
	for {
		fn, err := r.read(in)
		switch {
		case err == io.EOF:
			fmt.Fprintln(os.Stdout)
			return 0
		case errors.Is(err, errLineInterrupted):
		case err != nil:
			fmt.Fprintln(os.Stderr, err)
		default:
			r.run(fn)
		}
	}
}

// console is the state of one REPL: busy is held while a statement runs,
// so that completion, which runs on readline's goroutine, never reads the
// Lua state while a statement changes it.
type console struct {
	rt         *runtime.Runtime
	L          *lua.LState
	interrupts *interrupter
	busy       sync.Mutex
}

// bindGlobals requires replGlobals into globals of their names, leaving
// alone a name a script (glua -i script.lua) has already taken.
func bindGlobals(L *lua.LState) {
	for _, name := range replGlobals {
		if L.GetGlobal(name) != lua.LNil {
			continue
		}
		if err := doLibrary(L, name); err != nil {
			message(fmt.Sprintf("%s is not bound: %v", name, err))
		}
	}
}

// printBanner follows the version line (printVersion) with the backend
// and device that arrays will live on, on stderr as the version is.
func printBanner(rt *runtime.Runtime) {
	info, err := rt.Device()
	if err != nil {
		message(err.Error())
		return
	}
	fmt.Fprintf(os.Stderr, "backend %s, device %d: %s, %s; %s are globals\n", rt.BackendName(), info.Index, info.Name,
		config.FormatSize(info.TotalMemory), strings.Join(replGlobals, ", "))
}

// read reads one statement, over as many lines as it takes, and compiles
// it. An expression (or, as in Lua 5.1, a line starting with '=') becomes
// `return expression`, so that its values are printed. A statement is
// incomplete while the parser's error is at the end of the input ("near
// '<eof>'"), which is how lua.c decides it; an expression is incomplete
// the same way, so that `1 +` continues where a statement could not.
func (r *console) read(in lineReader) (*lua.LFunction, error) {
	line, err := readLine(in, prompt(r.L, "_PROMPT", "> "))
	if err != nil {
		return nil, err
	}
	expression := true // while `return line` may still compile
	if rest, ok := strings.CutPrefix(line, "="); ok {
		line = "return " + rest
		expression = false
	}
	for {
		expressionIncomplete := false
		if expression {
			fn, err := load(r.L, []byte("return "+line), "=stdin")
			if err == nil {
				return fn, nil
			}
			expressionIncomplete = incomplete(err)
			expression = expressionIncomplete
		}
		fn, err := load(r.L, []byte(line), "=stdin")
		if err == nil || !(incomplete(err) || expressionIncomplete) {
			return fn, err
		}
		more, err := readLine(in, prompt(r.L, "_PROMPT2", ">> "))
		if err != nil {
			return nil, err
		}
		line += "\n" + more
	}
}

// readLine is in.readLine with any failure to read taken as the end of
// the input, as lua.c takes it.
func readLine(in lineReader, prompt string) (string, error) {
	line, err := in.readLine(prompt)
	if err != nil && !errors.Is(err, errLineInterrupted) {
		return "", io.EOF
	}
	return line, err
}

// incomplete says a compile error is at the end of the input, as lua.c
// tells it: the message ends in '<eof>' (an unfinished string too, since
// the line is read without its newline).
func incomplete(err error) bool {
	return strings.HasSuffix(err.Error(), "'<eof>'")
}

// prompt is the global name's value when it is a string or a number, as
// lua.c lets _PROMPT and _PROMPT2 change its prompts, and def otherwise.
func prompt(L *lua.LState, name, def string) string {
	switch v := L.GetGlobal(name).(type) {
	case lua.LString, lua.LNumber:
		return v.String()
	}
	return def
}

// run calls fn, which Ctrl-C can interrupt, and prints what it returns
// with the global print, as Lua 5.3's REPL does. An error is printed as
// lua.c prints one at the prompt: without the program's name.
func (r *console) run(fn *lua.LFunction) {
	r.busy.Lock()
	defer r.busy.Unlock()
	L := r.L
	base := L.GetTop()
	defer L.SetTop(base)
	ctx, done := r.interrupts.start()
	defer done()
	r.rt.SetContext(ctx)
	L.Push(fn)
	if err := call(L, 0, lua.MultRet); err != nil {
		printError(err)
		return
	}
	n := L.GetTop() - base
	if n == 0 {
		return
	}
	L.Insert(L.GetGlobal("print"), base+1)
	if err := compat.PCall(L, n, 0, nil); err != nil {
		if msg, ok := errorMessage(err); ok {
			fmt.Fprintf(os.Stderr, "error calling 'print' (%s)\n", msg)
		}
	}
}

func printError(err error) {
	if msg, ok := errorMessage(err); ok {
		fmt.Fprintln(os.Stderr, msg)
	}
}
