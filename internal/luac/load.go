package luac

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/gluaproject/glua/internal/regularfile"
)

// Load compiles the Lua source read from r, with multiple assignment
// corrected, and returns it as a function of L, as L.Load does. chunkName
// is the source name that error messages and tracebacks show. Errors have
// L.Load's shape: a *lua.ApiError of type lua.ApiErrorSyntax whose message
// is the parser's or compiler's own.
func Load(L *lua.LState, r io.Reader, chunkName string) (fn *lua.LFunction, err error) {
	if L == nil {
		return nil, errors.New("luac.Load: nil *lua.LState")
	}
	if r == nil {
		return nil, errors.New("luac.Load: nil reader")
	}
	// lua.Compile re-panics anything that is not its own CompileError;
	// such a panic is a compiler fault, and the caller gets it as an error.
	defer func() {
		if rcv := recover(); rcv != nil {
			fn = nil
			err = syntaxError(fmt.Errorf("luac.Load: %s: compiler failure: %v", chunkName, rcv))
		}
	}()
	chunk, err := parse.Parse(r, chunkName)
	if err != nil {
		return nil, syntaxError(err)
	}
	chunk, rerr := rewriteChunk(chunk)
	if rerr != nil {
		// The form of gopher-lua's own compile errors.
		return nil, syntaxError(fmt.Errorf("compile error near line(%d) %s: %s", rerr.line, chunkName, rerr.msg))
	}
	proto, err := lua.Compile(chunk, chunkName)
	if err != nil {
		return nil, syntaxError(err)
	}
	recordTrees(proto, chunk)
	return L.NewFunctionFromProto(proto), nil
}

// LoadString is Load on a string.
func LoadString(L *lua.LState, source, chunkName string) (*lua.LFunction, error) {
	return Load(L, strings.NewReader(source), chunkName)
}

// LoadFile compiles the file at path; the chunk is named path, as
// L.LoadFile names it. A first line starting with '#' (a Unix "#!" line) is
// skipped as lua.c skips it, keeping its newline so that line numbers still
// count from the top of the file. An empty path reads standard input, as
// L.LoadFile does. A file that cannot be opened or read gives a
// *lua.ApiError of type lua.ApiErrorFile.
func LoadFile(L *lua.LState, path string) (*lua.LFunction, error) {
	if L == nil {
		return nil, errors.New("luac.LoadFile: nil *lua.LState")
	}
	var f *os.File
	if path == "" {
		f = os.Stdin
	} else {
		var err error
		if f, err = regularfile.Open(path); err != nil {
			return nil, fileError(err)
		}
		defer f.Close()
	}
	r, err := skipHashLine(f)
	if err != nil {
		return nil, fileError(err)
	}
	return Load(L, r, path)
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

// syntaxError and fileError build the errors L.Load and L.LoadFile return,
// so a caller that inspects *lua.ApiError sees no difference.
func syntaxError(err error) error {
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(err.Error()), Cause: err}
}

func fileError(err error) error {
	return &lua.ApiError{Type: lua.ApiErrorFile, Object: lua.LString(err.Error()), Cause: err}
}
