package lua51

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	lua "github.com/yuin/gopher-lua"
)

// The rest of the file methods and io functions check their file as
// liolib.c's tofile does, refuse to close the standard files, and read
// io.open's mode as C's fopen does.

// fileMethod is a method of gopher-lua's files, after Lua 5.1's check
// that the file is open (gopher-lua's lines and setvbuf used a closed
// file, and the others said "file is closed" in messages of their own).
type fileMethod struct {
	fn      lua.LGFunction // gopher-lua's
	options []string       // argument 2's, for seek and setvbuf
}

func (m fileMethod) call(L *lua.LState) int {
	if f, ok := asFile(L.Get(1)); ok && f.closed() {
		L.RaiseError("attempt to use a closed file")
	}
	if m.options != nil && L.GetTop() >= 2 {
		opt := checkString(L, 2)
		found := false
		for _, o := range m.options {
			found = found || opt == o
		}
		if !found {
			L.ArgError(2, "invalid option '"+opt+"'")
		}
		if opt == "line" {
			// gopher-lua buffers fully or not at all: a line-buffered
			// file's lines appear no later unbuffered
			L.Replace(2, lua.LString("no"))
		}
	}
	return m.fn(L)
}

// fileCloser is io.close and file:close: the standard files are not
// closed ("cannot close standard file", as io_noclose answers), so that
// io.close() does not take a script's output away.
type fileCloser struct {
	fn  lua.LGFunction // gopher-lua's
	std []lua.LValue   // io.stdin, io.stdout and io.stderr
	io  bool           // io.close, whose default is the default output
}

func (c fileCloser) call(L *lua.LState) int {
	target := L.Get(1)
	if c.io && L.GetTop() == 0 {
		if t, ok := L.Get(lua.UpvalueIndex(1)).(*lua.LTable); ok {
			target = t.RawGetInt(1)
		}
	}
	if f, ok := asFile(target); ok && f.closed() {
		L.RaiseError("attempt to use a closed file")
	}
	for _, s := range c.std {
		if target == s {
			L.Push(lua.LNil)
			L.Push(lua.LString("cannot close standard file"))
			return 2
		}
	}
	n := c.fn(L)
	// io.popen's file: gopher-lua gives the command's exit status, Lua
	// 5.1 true wherever pclose itself worked
	if n == 1 && L.Get(-1).Type() == lua.LTNumber {
		L.Replace(-1, lua.LTrue)
	}
	return n
}

// fileOpener is io.open, with the mode read as glibc's fopen reads it:
// r, w or a, then any of fopen's letters, of which "+" changes what
// gopher-lua must be told (it refused "rw", "r+b" and "rt") and "x" makes
// creating the file fail where it exists; a mode that starts otherwise
// fails with EINVAL, as fopen does.
type fileOpener struct{ open fileResult }

func (o fileOpener) call(L *lua.LState) int {
	if L.GetTop() >= 2 {
		mode := checkString(L, 2)
		if mode == "" || !strings.ContainsRune("rwa", rune(mode[0])) {
			name, _ := asString(L.Get(1))
			return pushErrno(L, name+": ", syscall.EINVAL)
		}
		rest := mode[1:]
		if i := strings.IndexByte(rest, ','); i >= 0 {
			rest = rest[:i] // glibc's ",ccs=" part
		}
		rest = rest[:min(len(rest), 6)]
		m := mode[:1]
		if strings.Contains(rest, "+") {
			m += "+"
		}
		// "x" is O_EXCL where the file is created: fail if it exists
		if name, ok := asString(L.Get(1)); ok && m[0] != 'r' && strings.Contains(rest, "x") {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
			if err != nil {
				var errno syscall.Errno
				if !errors.As(err, &errno) {
					errno = syscall.EEXIST
				}
				return pushErrno(L, name+": ", errno)
			}
			f.Close()
		}
		L.Replace(2, lua.LString(m))
	}
	return o.open.call(L)
}

// fileToString is Lua 5.1's file __tostring: "file (0x...)" with the
// file's address, or "file (closed)"; gopher-lua's said "file" for every
// open file, and "process" for io.popen's, which Lua 5.1 calls files too.
func fileToString(L *lua.LState) int {
	ud, ok := L.Get(1).(*lua.LUserData)
	f, isFile := asFile(L.Get(1))
	if !ok || !isFile {
		L.ArgError(1, "FILE* expected, got "+typeName(L, 1))
	}
	if f.closed() {
		L.Push(lua.LString("file (closed)"))
	} else {
		L.Push(lua.LString(fmt.Sprintf("file (%p)", ud.Value)))
	}
	return 1
}
