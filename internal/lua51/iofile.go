package lua51

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"unsafe"

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
	seek    bool           // a pipe cannot seek: ESPIPE, as fseek says
}

func (m fileMethod) call(L *lua.LState) int {
	if f, ok := asFile(L.Get(1)); ok && f.closed() {
		raise(L, "attempt to use a closed file")
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
	if m.seek {
		if f, ok := asFile(L.Get(1)); ok && f.process() {
			return pushErrno(L, "", syscall.ESPIPE) // fseek on a pipe
		}
	}
	return m.fn(L)
}

// ioPopen is io.popen(cmd [, mode]) as Lua 5.1's, through glibc's
// popen: "sh -c cmd" with the process's standard error, and its standard
// output where the pipe is the command's input ("w"), as the command's
// own (gopher-lua's sent both nowhere). The mode is "r" or "w", with "e"
// (close on exec) after it; anything else fails with EINVAL. The file is
// one of gopher-lua's, made through fileLayout, so that its methods,
// io.type and the collector treat it as theirs.
func ioPopen(L *lua.LState) int {
	command := checkString(L, 1)
	mode := "r"
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		mode = checkString(L, 2)
	}
	if mode != "r" && mode != "w" && mode != "re" && mode != "we" {
		return pushErrno(L, command+": ", syscall.EINVAL)
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stderr = os.Stderr
	v := reflect.New(fileLayout.typ.Elem())
	p := v.UnsafePointer()
	var err error
	if mode[0] == 'w' {
		cmd.Stdout = os.Stdout
		var in io.WriteCloser
		if in, err = cmd.StdinPipe(); err == nil {
			*(*io.Writer)(unsafe.Add(p, fileLayout.writer)) = in
		}
	} else {
		cmd.Stdin = os.Stdin
		var out io.ReadCloser
		if out, err = cmd.StdoutPipe(); err == nil {
			*(*io.ReadCloser)(unsafe.Add(p, fileLayout.stdout)) = out
			*(**bufio.Reader)(unsafe.Add(p, fileLayout.reader)) = bufio.NewReaderSize(out, 4096)
		}
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(command + ": " + Strerror(err)))
		return 2
	}
	*(**exec.Cmd)(unsafe.Add(p, fileLayout.pp)) = cmd
	ud := L.NewUserData()
	ud.Value = v.Interface()
	L.SetMetatable(ud, L.GetTypeMetatable(fileMethods))
	L.Push(ud)
	return 1
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
		raise(L, "attempt to use a closed file")
	}
	for _, s := range c.std {
		if target == s {
			L.Push(lua.LNil)
			L.Push(lua.LString("cannot close standard file"))
			return 2
		}
	}
	if f, ok := asFile(target); ok && f.process() {
		// pclose closes the command's input before it waits; gopher-lua
		// waited with the pipe open, so io.popen("cat > x", "w"):close()
		// never returned
		if w, ok := f.writer().(io.Closer); ok {
			w.Close()
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
	ud, f := checkFile(L)
	if f.closed() {
		L.Push(lua.LString("file (closed)"))
	} else {
		L.Push(lua.LString(fmt.Sprintf("file (%p)", ud.Value)))
	}
	return 1
}

// ioTypeArg is io.type's luaL_checkany: io.type() names its missing
// argument, where gopher-lua's answered nil.
func ioTypeArg(L *lua.LState) {
	if L.GetTop() == 0 {
		L.ArgError(1, "value expected")
	}
}

// defaultFile is io.input and io.output as liolib.c's g_iofile: a name
// (a number is one too) opens that file, and one that cannot be opened is
// a bad argument #1 naming it and C's reason, where gopher-lua raised
// Go's "open x: no such file or directory"; anything else must be an
// open file. io.output truncates the file it opens, as "w" does.
type defaultFile struct {
	fn     *lua.LFunction // gopher-lua's
	output bool           // io.output, which opens as fopen's "w" does
}

func (d defaultFile) call(L *lua.LState) int {
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
	case lua.LNumber:
		L.Replace(1, lua.LString(numberString(v)))
	case lua.LString:
	default:
		toFile(L)
	}
	if name, isName := L.Get(1).(lua.LString); isName && d.output {
		// gopher-lua opens without O_TRUNC: what the file held past the
		// new output stayed at its end
		if f, err := os.OpenFile(string(name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666); err == nil {
			f.Close()
		}
	}
	top := L.GetTop()
	L.Push(d.fn)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	if err := L.PCall(top, 1, nil); err != nil {
		apiErr, ok := err.(*lua.ApiError)
		if !ok {
			L.RaiseError("%s", err.Error())
		}
		if name, isName := L.Get(1).(lua.LString); isName {
			text := apiErr.Object.String()
			if i := strings.LastIndex(text, ": "); i >= 0 {
				if errno, ok := errnoOf(text[i+2:]); ok {
					L.ArgError(1, string(name)+": "+strerror(errno))
				}
			}
		}
		L.Error(apiErr.Object, 0)
	}
	return 1
}

// osDifftime is C's difftime(t1, t2) as Lua 5.1 calls it: t2 defaults to
// 0, and both are cast to time_t, whole seconds.
func osDifftime(L *lua.LState) int {
	t1 := checkNumber(L, 1)
	t2 := lua.LNumber(0)
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		t2 = checkNumber(L, 2)
	}
	L.Push(lua.LNumber(float64(toInt64(float64(t1)) - toInt64(float64(t2)))))
	return 1
}

// osTmpname is lua_tmpnam as Lua 5.1 builds it on POSIX: mkstemp on
// "/tmp/lua_XXXXXX", which creates the file (empty, mode 0600) so that no
// other process can take the name between the call and its use; gopher-lua
// only named a file.
func osTmpname(L *lua.LState) int {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var name [6]byte
	for range 100 {
		for i := range name {
			name[i] = letters[rand.IntN(len(letters))]
		}
		path := "/tmp/lua_" + string(name[:])
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			L.Push(lua.LString(path))
			return 1
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	L.RaiseError("unable to generate a unique filename")
	return 0
}

// osExecute is C's system as Lua 5.1 calls it: the shell's wait status
// (the exit code times 256, or the signal), where gopher-lua answered 0
// or 1; with no command, whether there is a shell (1 or 0).
func osExecute(L *lua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		if _, err := os.Stat("/bin/sh"); err == nil {
			L.Push(lua.LNumber(1))
		} else {
			L.Push(lua.LNumber(0))
		}
		return 1
	}
	cmd := exec.Command("/bin/sh", "-c", checkString(L, 1))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			L.Push(lua.LNumber(int(ws)))
			return 1
		}
	}
	if err != nil { // no shell to run: system's status for that
		L.Push(lua.LNumber(127 << 8))
		return 1
	}
	L.Push(lua.LNumber(0))
	return 1
}

// fileWriter is file:write and io.write: a closed default output is
// "standard output file is closed", and a file opened for reading fails
// as fwrite does, with EBADF (gopher-lua said "file x is opened for only
// reading.", 1).
type fileWriter struct {
	fn lua.LGFunction
	io bool // io.write, on the default output
}

func (w fileWriter) call(L *lua.LState) int {
	target := L.Get(1)
	if w.io {
		target = lua.LNil
		if t, ok := L.Get(lua.UpvalueIndex(1)).(*lua.LTable); ok {
			target = t.RawGetInt(1)
		}
	}
	if f, ok := asFile(target); ok {
		switch {
		case f.closed() && w.io:
			raise(L, "standard output file is closed")
		case f.closed():
			raise(L, "attempt to use a closed file")
		case !f.writable():
			return pushErrno(L, "", syscall.EBADF)
		}
	}
	return w.fn(L)
}

// linesIter is the iterator of io.lines and file:lines, reading as
// file:read("*l") does. gopher-lua's split a line longer than its
// reader's buffer, 4096 bytes, into several, and said "read x: file
// already closed" where Lua 5.1 says "file is already closed". The
// iterator of io.lines(name) closes its file at the end.
type linesIter struct {
	file    *lua.LUserData
	closeAt bool // close the file at its end
}

func (it linesIter) call(L *lua.LState) int {
	f, ok := asFile(it.file)
	if !ok || f.closed() {
		raise(L, "file is already closed")
	}
	r := f.reader()
	if r == nil {
		raise(L, strerror(syscall.EBADF))
	}
	got, err := readLine(L, r)
	if err != nil {
		raise(L, Strerror(err))
	}
	if got {
		return 1
	}
	L.Pop(1)
	if it.closeAt {
		if closer, ok := L.GetField(it.file, "close").(*lua.LFunction); ok {
			L.Push(closer)
			L.Push(it.file)
			L.Call(1, 0)
		}
	}
	L.Push(lua.LNil)
	return 1
}

// fileLines is file:lines(), with linesIter.
func fileLines(L *lua.LState) int {
	ud, _ := toFile(L)
	L.Push(L.NewFunction(linesIter{ud, false}.call))
	return 1
}

// osExitArgs is os.exit's luaL_optint, before gopher-lua's os.exit: that
// closes the state first and reads its argument after, so os.exit(true)
// or os.exit("4") raised an error on a closed state, and the process died
// with Go's panic and a segmentation fault.
func osExitArgs(L *lua.LState) {
	code := optInt(L, 1, 0)
	L.SetTop(0)
	L.Push(lua.LNumber(code))
}

// osSetlocale is os.setlocale for glua's one locale: numbers print and
// parse, and strings compare and change case, as in C's "C" locale, so a
// query, or asking for "C", "POSIX" or "" (the environment's, which glua
// does not take), answers "C", and any other locale nil, as C does for a
// locale it does not have. gopher-lua's answered false to everything.
func osSetlocale(L *lua.LState) int {
	locale := lua.LValue(lua.LNil)
	if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
		locale = lua.LString(checkString(L, 1))
	}
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		switch cat := checkString(L, 2); cat {
		case "all", "collate", "ctype", "monetary", "numeric", "time":
		default:
			L.ArgError(2, "invalid option '"+cat+"'")
		}
	}
	switch locale {
	case lua.LNil, lua.LString("C"), lua.LString("POSIX"), lua.LString(""):
		L.Push(lua.LString("C"))
	default:
		L.Push(lua.LNil)
	}
	return 1
}
