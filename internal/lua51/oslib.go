package lua51

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"

	lua "github.com/yuin/gopher-lua"
)

// fileResult puts Lua 5.1's pushresult message in place of the Go error
// text gopher-lua's io.open, os.remove and os.rename return on failure:
// "name: No such file or directory" and the errno, where gopher-lua gave
// "open name: no such file or directory" and 1. op is the word Go's error
// begins with; name the file Lua 5.1 names (rename's first).
type fileResult struct {
	fn      lua.LGFunction // gopher-lua's
	op      string
	unnamed bool // a file method's: the message has no file name
}

func (f fileResult) call(L *lua.LState) int {
	name, _ := asString(L.Get(1))
	base := L.GetTop()
	n := f.fn(L)
	if n < 2 || L.Get(-n) != lua.LNil {
		return n
	}
	msg, ok := L.Get(-n + 1).(lua.LString)
	if !ok {
		return n
	}
	text := string(msg)
	if i := strings.LastIndex(text, ": "); i >= 0 && strings.HasPrefix(text, f.op+" ") {
		text = text[i+2:]
	}
	errno, known := errnoOf(text)
	if !known {
		return n
	}
	L.SetTop(base)
	L.Push(lua.LNil)
	if f.unnamed {
		L.Push(lua.LString(strerror(errno)))
	} else {
		L.Push(lua.LString(name + ": " + strerror(errno)))
	}
	L.Push(lua.LNumber(errno))
	return 3
}

// errnos maps Go's text of each errno to the errno.
var errnos = sync.OnceValue(func() map[string]syscall.Errno {
	m := map[string]syscall.Errno{}
	for e := syscall.Errno(1); e < 256; e++ {
		if s := e.Error(); !strings.HasPrefix(s, "errno ") {
			m[s] = e
		}
	}
	return m
})

func errnoOf(text string) (syscall.Errno, bool) {
	e, ok := errnos()[text]
	return e, ok
}

// strerror is glibc's text for e: Go's, which copies glibc's with a
// lower-case first letter.
func strerror(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Strerror is what C's strerror says of the errno behind err (a file
// operation's *fs.PathError, say), as Lua 5.1's messages quote it: "No
// such file or directory". An error with no errno behind it gives its
// own text.
func Strerror(err error) string {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return strerror(errno)
	}
	return err.Error()
}

// ioLines is io.lines with Lua 5.1's error for a file name that cannot
// be opened: gopher-lua's returned nothing for it (so the for loop failed
// with "attempt to call a nil value"), where Lua 5.1 raises "bad argument
// #1 to 'lines' (name: No such file or directory)". The file is opened
// again only to word that error.
type ioLines struct {
	fn lua.LGFunction // gopher-lua's
}

func (f ioLines) call(L *lua.LState) int {
	if L.GetTop() == 0 {
		n := f.fn(L) // the iterator and the default input
		if ud, ok := L.Get(-1).(*lua.LUserData); ok && n == 2 && fileLayout.ok {
			L.Pop(2)
			if file, _ := asFile(ud); file.closed() {
				raise(L, "standard input file is closed")
			}
			L.Push(L.NewFunction(linesIter{ud, false}.call))
			return 1
		}
		return n
	}
	name := checkString(L, 1)
	if n := f.fn(L); n > 0 {
		// gopher-lua's iterator holds the file it opened as its second
		// upvalue; linesIter reads it instead
		if it, ok := L.Get(-1).(*lua.LFunction); ok && n == 1 && fileLayout.ok && len(it.Upvalues) == 2 {
			if ud, isFile := it.Upvalues[1].Value().(*lua.LUserData); isFile {
				L.Pop(1)
				L.Push(L.NewFunction(linesIter{ud, true}.call))
			}
		}
		return n
	}
	msg := "cannot open file"
	if file, err := os.Open(name); err != nil {
		msg = Strerror(err)
	} else {
		file.Close()
	}
	argError(L, 1, "lines", name+": "+msg)
	return 0
}

// osTimeFields is os.time's check of its table, before gopher-lua's: Lua
// 5.1 needs day, month and year, as numbers, and raises "field 'day'
// missing in date table" without one, where gopher-lua took -1 for it and
// returned some other date.
func osTimeFields(L *lua.LState) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return
	}
	for _, key := range []string{"day", "month", "year"} {
		switch v := t.RawGetString(key).(type) {
		case lua.LNumber:
			continue
		case lua.LString:
			if _, ok := str2d(string(v)); ok {
				continue
			}
		}
		raise(L, "field '"+key+"' missing in date table")
	}
}
