package jit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Env is what a function captures from its script: the locals of the
// enclosing code it reads (its upvalues), each read when asked, so that a
// kernel sees a value as it is at the launch.
type Env interface {
	// Upvalue is the current value of the captured local name; false when
	// the function captures no local of that name.
	Upvalue(name string) (Capture, bool)
}

// Capture is the value of a captured local: a number, which a kernel
// compiles in as a constant, or a function in the kernel language, which
// it calls as a device function. Anything else is refused by name.
type Capture struct {
	Kind   string // "number", "function", or the Lua type of another value
	Number float64
	// Func is a function's tree as ParseDevice accepted it; Err is why it
	// was not accepted.
	Func *Function
	Err  error
}

// Scope is what Parse checks a kernel against beyond its own text.
type Scope struct {
	Env Env // nil when the function captures nothing
	// SharedPerBlock is the device's static shared memory per block in
	// bytes, so that a kernels.shared of literal size too large for a
	// block is refused by kernels.jit; 0 checks it only at the launch.
	SharedPerBlock int
}

// CaptureKey is the values f and the device functions it reaches capture,
// now, as text: two launches whose keys differ compile two variants,
// because each number is compiled in. A capture that no kernel can use
// is an error naming it.
func CaptureKey(f *Function) (string, error) {
	var b strings.Builder
	seen := map[*Function]bool{}
	var walk func(f *Function) error
	walk = func(f *Function) error {
		if seen[f] {
			return nil
		}
		seen[f] = true
		for _, name := range f.Captured {
			c, err := f.capture(name, f.Tree.Line())
			if err != nil {
				return err
			}
			switch c.Kind {
			case "number":
				b.WriteString(name + "=" + strconv.FormatFloat(c.Number, 'g', -1, 64) + ";")
			case "function":
				fmt.Fprintf(&b, "%s=%p;", name, c.Func)
				if err := walk(c.Func); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// capture reads the captured local name of f, refusing a value no kernel
// can use.
func (f *Function) capture(name string, line int) (Capture, error) {
	fail := func(format string, args ...any) (Capture, error) {
		return Capture{}, &Error{Chunk: f.Chunk, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if f.Env == nil {
		return fail("the upvalue %s is not allowed in a kernel", name)
	}
	c, ok := f.Env.Upvalue(name)
	switch {
	case !ok:
		return fail("the upvalue %s is not allowed in a kernel", name)
	case c.Kind == "number":
		return c, nil
	case c.Kind == "function" && c.Err != nil:
		return Capture{}, c.Err
	case c.Kind == "function":
		return c, nil
	case c.Kind == "nil":
		return fail("the captured local %s is nil at the launch; give it a number or a function in the kernel language first", name)
	}
	return fail("%s", refusedCapture(name, c.Kind))
}

func refusedCapture(name, kind string) string {
	return fmt.Sprintf("the captured local %s is a %s; a kernel may capture numbers (compiled in as constants) and functions in the kernel language, and takes anything else as a parameter", name, kind)
}

// capturedConst is a captured number as a literal would be: an integer
// when it has no fraction, else a float of hint's type.
func (t *typer) capturedConst(name string, line int, hint Type) Expr {
	c := t.captureOf(name, line)
	if c.Kind != "number" {
		t.fail(line, "%s is a function; call it", name)
	}
	v := c.Number
	if v == math.Trunc(v) && math.Abs(v) <= 1<<53 {
		return &Const{T: Int, I: int64(v)}
	}
	typ := t.defaultFloat
	if hint.IsFloat() {
		typ = hint
	}
	return t.to(&Const{T: Float64, F: v}, typ)
}

func (t *typer) captureOf(name string, line int) Capture {
	f := &Function{Chunk: t.chunk, Env: t.env}
	c, err := f.capture(name, line)
	if err != nil {
		if e, ok := err.(*Error); ok {
			panic(e)
		}
		t.fail(line, "%v", err)
	}
	return c
}
