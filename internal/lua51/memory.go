package lua51

import (
	lua "github.com/yuin/gopher-lua"
)

// The library functions of this package that build a string from many
// pieces (.., table.concat, gsub over matcher) say how big it is about to
// grow before Go allocates it, through the function SetGrowthCheck
// installs, so that a script's memory limit (internal/luamem) can refuse
// it with a Lua error: Go's own failure to allocate ends the process.
var growthCheck func(L *lua.LState, nbytes int)

// SetGrowthCheck makes check the function told of a string of at least
// BigString bytes that is about to be built; it raises a Lua error to
// refuse. It is process-wide, like the VM's instructions, and set once,
// before any state runs.
func SetGrowthCheck(check func(L *lua.LState, nbytes int)) { growthCheck = check }

// BigString is the size from which a string about to be built is checked:
// below it, one allocation is too small to matter on its own, and the
// periodic look at the heap counts it.
const BigString = 64 << 10

// grow tells the growth check that a string of nbytes is about to be
// built.
func grow(L *lua.LState, nbytes int) {
	if (nbytes >= BigString || nbytes < 0) && growthCheck != nil {
		if nbytes < 0 { // an int overflowed adding lengths up
			nbytes = int(^uint(0) >> 1)
		}
		growthCheck(L, nbytes)
	}
}

// growing checks a builder's growth: built is what it holds, adding what
// is about to be written, and *next the size at which to check next, which
// doubles each time, as the builder's buffer does.
func growing(L *lua.LState, built, adding int, next *int) {
	if n := built + adding; n >= *next || n < 0 {
		grow(L, n)
		*next = max(2*n, BigString)
	}
}

// textSize is at least the length of joinText(vs): a number's text is at
// most 24 bytes ("%.14g").
func textSize(vs []lua.LValue) int {
	n := 0
	for _, v := range vs {
		if s, ok := v.(lua.LString); ok {
			n += len(s)
		} else {
			n += 24
		}
	}
	return n
}

// CheckContext raises the context's error if L's context is done, as the
// VM does at its next instruction: for other packages' long library calls.
func CheckContext(L *lua.LState) { checkContext(L) }
