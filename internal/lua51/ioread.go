package lua51

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// io.read and file:read are liolib.c's g_read. gopher-lua's differed from
// Lua 5.1 in ways a script cannot see coming: "*n" used Go's Fscanf, so
// it read no hexadecimal number ("0x10" is 16 to C's fscanf) and put
// strconv's message into the script; a read of a negative count stopped
// the script with Go's "makeslice: len out of range"; a format that
// failed did not stop the formats after it; a closed file and a bad
// format had messages of their own.
//
// gopher-lua's file type is unexported, so its reader, writer, file and closed flag are
// found by name and type, as layout.go finds the state's fields; where
// they are not (a changed gopher-lua), its own read stays in place and
// TestFileLayoutIsKnown fails.
var fileLayout struct {
	once                       sync.Once
	ok                         bool
	typ                        reflect.Type // *lFile
	reader, closed, writer, fp uintptr
	pp, stdout                 uintptr // for popen, which makes files
}

// fileFields finds the layout from a file of the state, once.
func fileFields(ud *lua.LUserData) bool {
	fileLayout.once.Do(func() {
		t := reflect.TypeOf(ud.Value)
		if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return
		}
		r, ok1 := t.Elem().FieldByName("reader")
		c, ok2 := t.Elem().FieldByName("closed")
		w, ok3 := t.Elem().FieldByName("writer")
		fp, ok4 := t.Elem().FieldByName("fp")
		if !ok1 || !ok2 || !ok3 || !ok4 || r.Type != reflect.TypeFor[*bufio.Reader]() || c.Type != reflect.TypeFor[bool]() ||
			w.Type != reflect.TypeFor[io.Writer]() || fp.Type != reflect.TypeFor[*os.File]() {
			return
		}
		fileLayout.typ, fileLayout.reader, fileLayout.closed, fileLayout.writer = t, r.Offset, c.Offset, w.Offset
		fileLayout.fp = fp.Offset
		pp, ok5 := t.Elem().FieldByName("pp")
		so, ok6 := t.Elem().FieldByName("stdout")
		if !ok5 || !ok6 || pp.Type != reflect.TypeFor[*exec.Cmd]() || so.Type != reflect.TypeFor[io.ReadCloser]() {
			return
		}
		fileLayout.pp, fileLayout.stdout = pp.Offset, so.Offset
		fileLayout.ok = true
	})
	return fileLayout.ok
}

// luaFile is one of gopher-lua's files, seen through fileLayout.
type luaFile struct{ p unsafe.Pointer }

func asFile(v lua.LValue) (luaFile, bool) {
	ud, ok := v.(*lua.LUserData)
	if !ok || !fileLayout.ok || reflect.TypeOf(ud.Value) != fileLayout.typ {
		return luaFile{}, false
	}
	return luaFile{reflect.ValueOf(ud.Value).UnsafePointer()}, true
}

func (f luaFile) reader() *bufio.Reader {
	return *(**bufio.Reader)(unsafe.Add(f.p, fileLayout.reader))
}

func (f luaFile) closed() bool { return *(*bool)(unsafe.Add(f.p, fileLayout.closed)) }

func (f luaFile) writable() bool { return f.writer() != nil }

func (f luaFile) writer() io.Writer { return *(*io.Writer)(unsafe.Add(f.p, fileLayout.writer)) }

// process reports whether the file is io.popen's: it has no *os.File.
func (f luaFile) process() bool { return *(**os.File)(unsafe.Add(f.p, fileLayout.fp)) == nil }

// checkFile is luaL_checkudata(L, 1, "FILE*"): argument 1 must be one
// of gopher-lua's files.
func checkFile(L *lua.LState) (*lua.LUserData, luaFile) {
	f, ok := asFile(L.Get(1))
	if !ok {
		L.ArgError(1, "FILE* expected, got "+typeName(L, 1))
	}
	return L.Get(1).(*lua.LUserData), f
}

// toFile is liolib.c's tofile: checkFile, and the file must be open.
func toFile(L *lua.LState) (*lua.LUserData, luaFile) {
	ud, f := checkFile(L)
	if f.closed() {
		raise(L, "attempt to use a closed file")
	}
	return ud, f
}

// fileRead is file:read(...).
func fileRead(L *lua.LState) int {
	_, f := toFile(L)
	return gRead(L, f, 2)
}

// ioRead is io.read(...), on the default input, which gopher-lua keeps in
// the table that is the function's first upvalue (at 2).
func ioRead(L *lua.LState) int {
	t, _ := L.Get(lua.UpvalueIndex(1)).(*lua.LTable)
	var in lua.LValue = lua.LNil
	if t != nil {
		in = t.RawGetInt(2)
	}
	f, ok := asFile(in)
	if !ok || f.closed() {
		raise(L, "standard input file is closed")
	}
	return gRead(L, f, 1)
}

// gRead reads the formats from argument first on, each giving one result,
// and stops at the first that fails, whose result is nil.
func gRead(L *lua.LState, f luaFile, first int) int {
	r := f.reader()
	if r == nil { // opened for writing only: fread fails with EBADF
		return pushErrno(L, "", syscall.EBADF)
	}
	top := L.GetTop()
	if top < first {
		ok, err := readLine(L, r)
		if err != nil {
			return pushReadError(L, err)
		}
		if !ok {
			L.Pop(1)
			L.Push(lua.LNil)
		}
		return 1
	}
	n := first
	ok := true
	for ; n <= top && ok; n++ {
		var err error
		switch v := L.Get(n).(type) {
		case lua.LNumber:
			// (size_t) of a negative count is huge: the rest of the file
			count := toInt64(float64(v))
			if count == 0 { // test_eof
				_, perr := r.Peek(1)
				L.Push(lua.LString(""))
				ok = perr == nil
				if perr != io.EOF {
					err = perr
				}
				break
			}
			ok, err = readChars(L, r, count)
		default:
			p, isString := "", false
			if s, is := v.(lua.LString); is {
				p, isString = string(s), true
			}
			if !isString || len(p) == 0 || p[0] != '*' {
				L.ArgError(n, "invalid option")
			}
			switch {
			case strings.HasPrefix(p, "*n"):
				ok, err = readNumber(L, r)
			case strings.HasPrefix(p, "*l"):
				ok, err = readLine(L, r)
			case strings.HasPrefix(p, "*a"):
				_, err = readChars(L, r, -1)
				ok = true
			default:
				L.ArgError(n, "invalid format")
			}
		}
		if err != nil {
			return pushReadError(L, err)
		}
	}
	if !ok {
		L.Pop(1)
		L.Push(lua.LNil)
	}
	return n - first
}

// readChars pushes up to count bytes (all that is left where count < 0)
// and reports whether it read any, or all asked.
func readChars(L *lua.LState, r *bufio.Reader, count int64) (bool, error) {
	var b strings.Builder
	var err error
	if count < 0 {
		_, err = io.Copy(&b, r)
	} else {
		_, err = io.CopyN(&b, r, count)
		if err == io.EOF {
			err = nil
		}
	}
	L.Push(lua.LString(b.String()))
	return b.Len() > 0 || count == 0, err
}

// readLine pushes the next line without its newline, and reports whether
// there was one (an empty last line without a newline is none).
func readLine(L *lua.LState, r *bufio.Reader) (bool, error) {
	line, err := r.ReadString('\n')
	if err == io.EOF {
		err = nil
	} else if err == nil {
		line = line[:len(line)-1]
		L.Push(lua.LString(line))
		return true, nil
	}
	L.Push(lua.LString(line))
	return len(line) > 0, err
}

// readNumber is fscanf(f, "%lf"): blanks skipped, then the longest text
// that starts a number as strtod reads it (decimal, hexadecimal with an
// optional binary exponent, inf, infinity, nan), consumed as it is read
// with one character of look-ahead given back; the number where that text
// is one, else nil.
func readNumber(L *lua.LState, r *bufio.Reader) (bool, error) {
	var text []byte
	c, err := r.ReadByte()
	for err == nil && isSpace(c) {
		c, err = r.ReadByte()
	}
	// next accepts c where ok, reads the one after, and reports ok
	next := func(ok bool) bool {
		if !ok || err != nil {
			return false
		}
		text = append(text, c)
		c, err = r.ReadByte()
		return true
	}
	next(c == '+' || c == '-')
	digits := func(hex bool) int {
		n := 0
		for err == nil && (isDigit(c) || hex && isHexLetter(c)) {
			next(true)
			n++
		}
		return n
	}
	word := func(w string) int {
		n := 0
		for n < len(w) && err == nil && lower(c) == w[n] {
			next(true)
			n++
		}
		return n
	}
	switch {
	case err == nil && lower(c) == 'i':
		if n := word("inf"); n == 3 {
			if m := word("inity"); m != 0 && m != 5 {
				text = append(text, '!') // a prefix of "infinity" only
			}
		}
	case err == nil && lower(c) == 'n':
		word("nan")
	default:
		hex := false
		if c == '0' {
			next(true)
			if err == nil && lower(c) == 'x' {
				next(true)
				hex = true
			}
		}
		n := digits(hex)
		if next(c == '.') {
			n += digits(hex)
		}
		exp := byte('e')
		if hex {
			exp = 'p'
		}
		if n > 0 || !hex && len(text) > 0 && text[len(text)-1] == '0' {
			if next(err == nil && lower(c) == exp) {
				next(c == '+' || c == '-')
				digits(false)
			}
		}
	}
	if err == nil {
		r.UnreadByte()
	} else if err != io.EOF {
		return false, err
	}
	v, ok := parseScanned(string(text))
	if !ok {
		L.Push(lua.LNil)
		return false, nil
	}
	L.Push(lua.LNumber(v))
	return true, nil
}

// parseScanned converts what readNumber took, as strtod would.
func parseScanned(s string) (float64, bool) {
	t := strings.TrimLeft(s, "+-")
	if t == "" || strings.HasSuffix(t, "!") {
		return 0, false
	}
	lt := strings.ToLower(t)
	hex := strings.HasPrefix(lt, "0x")
	// glibc's scanf takes an exponent marker with no digits after it, and
	// its sign, as part of the number, and ignores them: "1e+" is 1
	for _, tail := range []string{"e+", "e-", "e", "p+", "p-", "p"} {
		if strings.HasSuffix(lt, tail) && (tail[0] == 'p') == hex {
			s, lt = s[:len(s)-len(tail)], lt[:len(lt)-len(tail)]
			break
		}
	}
	if hex && !strings.Contains(lt, "p") {
		s += "p0" // Go wants a binary exponent on a hexadecimal float
	}
	v, err := strconv.ParseFloat(s, 64)
	var ne *strconv.NumError
	if err != nil && !(errors.As(err, &ne) && ne.Err == strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

func isHexLetter(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func lower(c byte) byte       { return c | 0x20 }

// pushReadError is pushresult(L, 0, NULL) for a failed read.
func pushReadError(L *lua.LState, err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return pushErrno(L, "", errno)
	}
	L.Push(lua.LNil)
	L.Push(lua.LString(err.Error()))
	L.Push(lua.LNumber(0))
	return 3
}

// pushErrno is pushresult's failure: nil, the message (after prefix, a
// file's name and ": " where there is one) and the errno.
func pushErrno(L *lua.LState, prefix string, e syscall.Errno) int {
	L.Push(lua.LNil)
	L.Push(lua.LString(prefix + strerror(e)))
	L.Push(lua.LNumber(int(e)))
	return 3
}
