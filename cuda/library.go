package cuda

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// fn is the address of one C function in a loaded library. Zero means an
// optional symbol the library does not export.
type fn uintptr

// call invokes f with integer and pointer arguments only (none of the CUDA,
// NVRTC or cuBLAS functions glua uses take floats by value) and returns the
// raw result register. uintptrescapes keeps every Go object whose address is
// converted to uintptr in the call expression on the heap and alive until
// the C function returns, as the unsafe.Pointer rules require.
//
//go:uintptrescapes
func (f fn) call(args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(uintptr(f), args...)
	return r
}

// library is one shared object opened with dlopen.
type library struct {
	what   string // "CUDA driver", "NVRTC", "cuBLAS"
	name   string // the name dlopen accepted
	handle uintptr
}

// symbol binds a C function name to the field that holds its address.
type symbol struct {
	name     string
	addr     *fn
	optional bool
}

// openLibrary tries each name in order and returns the first that dlopen
// accepts. The error names every name tried with dlerror's text for each, so
// a user can tell a missing library from a broken one.
func openLibrary(what string, names []string) (*library, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("cuda: no %s: no library names to try", what)
	}
	var reasons []string
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return &library{what: what, name: name, handle: h}, nil
		}
		msg := err.Error()
		if !strings.Contains(msg, name) {
			msg = name + ": " + msg
		}
		reasons = append(reasons, msg)
	}
	return nil, fmt.Errorf("cuda: no %s: tried %s: %s", what, strings.Join(names, ", "), strings.Join(reasons, "; "))
}

// resolve looks every symbol up with dlsym first, so that a missing one is
// an error naming it rather than the panic purego.RegisterLibFunc would
// raise. All missing required symbols are reported at once.
func (l *library) resolve(syms []symbol) error {
	var missing []string
	for _, s := range syms {
		addr, err := purego.Dlsym(l.handle, s.name)
		if err != nil || addr == 0 {
			*s.addr = 0
			if !s.optional {
				missing = append(missing, s.name)
			}
			continue
		}
		*s.addr = fn(addr)
	}
	if len(missing) > 0 {
		return fmt.Errorf("cuda: %s library %s has no symbol %s (too old a version?)",
			l.what, l.name, strings.Join(missing, ", "))
	}
	return nil
}

func (l *library) close() {
	if l != nil && l.handle != 0 {
		_ = purego.Dlclose(l.handle)
		l.handle = 0
	}
}

// mappedPath is the file mapped at addr in this process, read from
// /proc/self/maps: the real path of the library dlopen found, without
// dladdr (which would need cgo). Empty when it cannot be told.
func mappedPath(addr uintptr) string {
	if addr == 0 {
		return ""
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if path, ok := mapsLineContains(sc.Text(), addr); ok {
			return path
		}
	}
	return ""
}

// mapsLineContains parses one /proc/self/maps line ("lo-hi perms offset dev
// inode path") and reports the path when addr lies in [lo, hi).
func mapsLineContains(line string, addr uintptr) (string, bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 {
		return "", false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	if !ok {
		return "", false
	}
	l, err1 := strconv.ParseUint(lo, 16, 64)
	h, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || uint64(addr) < l || uint64(addr) >= h {
		return "", false
	}
	return strings.Join(fields[5:], " "), true
}

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// resultString reads a const char* returned in a result register.
func resultString(r uintptr) string {
	return goString(*(**byte)(unsafe.Pointer(&r)))
}

// cString is s as a NUL-terminated byte slice for passing to C.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
