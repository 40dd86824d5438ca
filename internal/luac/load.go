package luac

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/internal/regularfile"
)

// Load compiles the Lua source read from r with glua's parser (parse.go)
// and code generator (codegen.go) and returns it as a function of L, as L.Load does. chunkName
// is the chunk's name as Lua 5.1 takes it: "@" and a file's path, "=" and
// a name shown as it is, or else the source itself, shown as
// [string "first line..."] (ChunkID); messages, tracebacks and the
// prototype's SourceName show that form. The source may nest as deep as a
// string that a script passes to loadstring (StringLevels). Errors have
// L.Load's shape: a *lua.ApiError of type lua.ApiErrorSyntax whose message
// is lua5.1's own (`[string "x = = 1"]:1: unexpected symbol near '='`),
// with the *SyntaxError as its Cause.
func Load(L *lua.LState, r io.Reader, chunkName string) (*lua.LFunction, error) {
	if L == nil {
		return nil, errors.New("luac.Load: nil *lua.LState")
	}
	if r == nil {
		return nil, errors.New("luac.Load: nil reader")
	}
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(err.Error()), Cause: err}
	}
	return LoadChunk(L, src, chunkName, StringLevels)
}

// LoadChunk is Load on a source in memory, with levels the syntax levels
// already in use (FileLevels for a script the host runs, StringLevels for
// one a script loads).
func LoadChunk(L *lua.LState, src []byte, chunkName string, levels int) (fn *lua.LFunction, err error) {
	if L == nil {
		return nil, errors.New("luac.LoadChunk: nil *lua.LState")
	}
	if len(src) > 0 && src[0] == luaSignature {
		return nil, syntaxError(fmt.Errorf("%s: cannot load a precompiled chunk: glua compiles Lua source only", undumpName(chunkName)))
	}
	display := ChunkID(chunkName)
	// A panic other than a compile error is a compiler fault; the caller
	// gets it as an error.
	defer func() {
		if rcv := recover(); rcv != nil {
			fn = nil
			err = syntaxError(fmt.Errorf("luac.Load: %s: compiler failure: %v", display, rcv))
		}
	}()
	chunk, facts, err := parseChunk(src, chunkName, levels, contextStop(L))
	var stop *StoppedError
	if errors.As(err, &stop) {
		return nil, err
	}
	if err != nil {
		return nil, syntaxError(err)
	}
	proto, err := compileChunk(chunk, facts, display)
	if err != nil {
		if ce, ok := err.(*CompileError); ok && (ce.Message == tooComplex || ce.Message == tooLong) {
			err = nearError(src, chunkName, levels, display, err)
		}
		return nil, syntaxError(err)
	}
	recordTrees(proto, chunk)
	recordSource(proto, chunkName)
	return L.NewFunctionFromProto(proto), nil
}

// LoadString is Load on a string.
func LoadString(L *lua.LState, source, chunkName string) (*lua.LFunction, error) {
	return LoadChunk(L, []byte(source), chunkName, StringLevels)
}

// LoadFile compiles the file at path; the chunk is named "@" and path, as
// luaL_loadfile names it, so messages show the path. A first line starting with '#' (a Unix "#!" line) is
// skipped as lua.c skips it, keeping its newline so that line numbers still
// count from the top of the file. An empty path reads standard input (the
// chunk "=stdin"), as L.LoadFile does. A file that cannot be opened or read gives a
// *lua.ApiError of type lua.ApiErrorFile.
func LoadFile(L *lua.LState, path string) (*lua.LFunction, error) {
	return loadFile(L, path, FileLevels)
}

func loadFile(L *lua.LState, path string, levels int) (*lua.LFunction, error) {
	if L == nil {
		return nil, errors.New("luac.LoadFile: nil *lua.LState")
	}
	var f *os.File
	name := "@" + path
	if path == "" {
		f, name = os.Stdin, "=stdin"
	} else {
		var err error
		if f, err = regularfile.Open(path); err != nil {
			return nil, openError(path, err)
		}
		defer f.Close()
	}
	r, err := skipHashLine(f)
	if err != nil {
		return nil, fileError("read", name[1:], err)
	}
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fileError("read", name[1:], err)
	}
	return LoadChunk(L, src, name, levels)
}

// skipHashLine returns r past a first line that starts with '#', stopping
// before its newline.
func skipHashLine(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	first, err := br.Peek(1)
	if err == io.EOF {
		return br, nil
	}
	if err != nil {
		return nil, err
	}
	if first[0] != '#' {
		return br, nil
	}
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return br, nil
		}
		if err != nil {
			return nil, err
		}
		if c == '\n' {
			return br, br.UnreadByte()
		}
	}
}

// luaSignature starts a chunk precompiled by luac ("\033Lua"), which
// lua5.1 loads with its undumper; glua has no Lua 5.1 bytecode to load
// (string.dump refuses too), and says so rather than report the escape
// byte as a syntax error.
const luaSignature = 0x1b

// undumpName is the chunk's name as lundump.c's messages give it.
func undumpName(chunkName string) string {
	switch {
	case strings.HasPrefix(chunkName, "@"), strings.HasPrefix(chunkName, "="):
		return chunkName[1:]
	case strings.HasPrefix(chunkName, "\033"):
		return "binary string"
	}
	return chunkName
}

// syntaxError and fileError build the errors L.Load and L.LoadFile return,
// so a caller that inspects *lua.ApiError sees no difference.
func syntaxError(err error) error {
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(err.Error()), Cause: err}
}

// fileError is luaL_loadfile's errfile: "cannot open x: No such file or
// directory", what ("open" or "read") said of the file named name.
func fileError(what, name string, err error) error {
	msg := fmt.Sprintf("cannot %s %s: %s", what, name, lua51.Strerror(err))
	return &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(msg), Cause: err}
}

// openError is fileError for a file regularfile.Open refused: a directory
// or another file that is not a regular one has its own message already.
func openError(path string, err error) error {
	var notRegular *regularfile.Error
	if errors.As(err, &notRegular) {
		return &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(err.Error()), Cause: err}
	}
	return fileError("open", path, err)
}

// StoppedError is a load given up because L's context ended (a deadline,
// Options.Context, --timeout) while the source was read; its message is
// the context's, as the VM's would be.
type StoppedError struct{ Err error }

func (e *StoppedError) Error() string { return e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

// contextStop is the parser's stop for L: the context's error once it is
// done, so that a huge source stops at the deadline as a script does.
func contextStop(L *lua.LState) func() error {
	ctx := L.Context()
	if ctx == nil {
		return nil
	}
	return func() error {
		select {
		case <-ctx.Done():
			return &StoppedError{ctx.Err()}
		default:
			return nil
		}
	}
}
