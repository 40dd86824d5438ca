package jit

import (
	"fmt"
	"math"
	"strings"

	"github.com/gluaproject/glua/internal/lua51"
	"github.com/gluaproject/glua/kernels"
)

// thread is one kernel thread's state on the CPU.
type thread struct {
	ints   []int64
	floats []float64
	bools  []bool
	tid    [3]int
	bid    [3]int
	run    *launch
	shared [][]byte  // the block's shared arrays
	local  [][]byte  // the thread's local arrays
	block  *barrier  // nil when the kernel does not synchronise
	frames []*thread // the locals of each of the program's Funcs, made at first call
	warp   *warp     // nil when the kernel uses no warp operation
	lane   int       // 0-based, in warp
}

type (
	floatFn func(*thread) float64
	intFn   func(*thread) int64
	boolFn  func(*thread) bool
	stmtFn  func(*thread) flow
)

// flow is how a statement ends.
type flow uint8

const (
	next flow = iota
	breakLoop
	returnKernel
)

// compiler turns a typed program into Go closures, once per launch.
type compiler struct {
	p     *Program
	sites []warpSite // the warp operations, numbered by compiler.site
}

// f32 rounds to float32: float32 work rounds after every operation, as the
// GPU's does (the translation is compiled with --fmad=false).
func f32(v float64) float64 { return float64(float32(v)) }

// nan32 is the GPU's NaN result of float32 arithmetic, as a float64.
var nan32 = float64(kernels.ArithNaN32)

func (c *compiler) float(x Expr) floatFn {
	round := x.Type() == Float32
	fn := c.floatRaw(x)
	if !round {
		return fn
	}
	switch x.(type) {
	case *Const, *LocalGet, *Load, *Neg:
		return fn // already float32 values
	}
	return func(t *thread) float64 { return f32(fn(t)) }
}

// arithNaN is the GPU's NaN result of arithmetic of type typ on a and b (a
// unary operation passes its operand twice): its float32 NaN, or the
// float64 one kernels.ArithNaN64 picks. The evaluator's operations call it
// where Go's result is a NaN, whose bits are Go's own.
func arithNaN(typ Type) func(a, b float64) float64 {
	if typ == Float64 {
		return kernels.ArithNaN64
	}
	return func(float64, float64) float64 { return nan32 }
}

func (c *compiler) floatRaw(x Expr) floatFn {
	switch ex := x.(type) {
	case *Const:
		v := ex.F
		return func(*thread) float64 { return v }
	case *LocalGet:
		s := ex.Slot
		return func(t *thread) float64 { return t.floats[s] }
	case *Convert:
		if ex.X.Type() == Int && ex.T == Float32 {
			// rounded once, as C's (float) of a long long: through
			// float64 an integer past 2^53 would round twice
			i := c.int(ex.X)
			return func(t *thread) float64 { return float64(float32(i(t))) }
		}
		if ex.X.Type() == Int {
			i := c.int(ex.X)
			return func(t *thread) float64 { return float64(i(t)) }
		}
		return c.float(ex.X)
	case *Neg:
		// a negation is arithmetic on the GPU: of a NaN, the GPU's NaN,
		// its sign not flipped
		f, nan := c.float(ex.X), arithNaN(ex.Type())
		return func(t *thread) float64 {
			if v := f(t); v == v {
				return -v
			} else {
				return nan(v, v)
			}
		}
	case *Arith:
		return c.floatArith(ex)
	case *Load:
		return c.floatLoad(ex)
	case *Math:
		return c.floatMath(ex)
	case *Call:
		call, ret := c.call(ex), c.float(ex.Fn.Ret)
		return func(t *thread) float64 { return ret(call(t)) }
	case *Shfl:
		f := c.shfl(ex)
		return func(t *thread) float64 { return math.Float64frombits(f(t)) }
	}
	panic(fmt.Sprintf("jit: no float evaluation of %T", x))
}

func (c *compiler) floatArith(ex *Arith) floatFn {
	x, y, nan := c.float(ex.X), c.float(ex.Y), arithNaN(ex.T)
	single := ex.T == Float32
	switch ex.Op {
	case "+":
		return func(t *thread) float64 {
			a, b := x(t), y(t)
			if r := a + b; r == r {
				return r
			}
			return nan(a, b)
		}
	case "-":
		return func(t *thread) float64 {
			a, b := x(t), y(t)
			if r := a - b; r == r {
				return r
			}
			return nan(a, b)
		}
	case "*":
		return func(t *thread) float64 {
			a, b := x(t), y(t)
			if r := a * b; r == r {
				return r
			}
			return nan(a, b)
		}
	case "/":
		return func(t *thread) float64 {
			a, b := x(t), y(t)
			if r := a / b; r == r {
				return r
			}
			return nan(a, b)
		}
	case "%":
		// a - floor(a/b)*b: each step takes the later NaN operand, so
		// a NaN result is b's if b is one, then a's
		return func(t *thread) float64 {
			a, b := x(t), y(t)
			q := a / b
			if single {
				q = f32(q)
			}
			p := math.Floor(q) * b
			if single {
				p = f32(p)
			}
			if r := a - p; r == r {
				return r
			}
			return nan(a, b)
		}
	}
	return func(t *thread) float64 {
		a, b := x(t), y(t)
		if r := lua51.Pow(a, b); r == r {
			return r
		}
		return nan(a, b)
	}
}

func (c *compiler) floatMath(ex *Math) floatFn {
	args := make([]floatFn, len(ex.Args))
	for i, a := range ex.Args {
		if a.Type() != Int { // ldexp's exponent is evaluated as an integer
			args[i] = c.float(a)
		}
	}
	a, nan := args[0], arithNaN(ex.T)
	switch ex.Fn {
	case "maximum", "minimum":
		// map_reduce's max and min (combine): kernels.maximum's rule, a
		// NaN in either wins, the first of equal values
		b, less := args[1], ex.Fn == "minimum"
		return func(t *thread) float64 {
			y, x := a(t), b(t)
			if y != y || less && y <= x || !less && y >= x {
				return y
			}
			return x
		}
	case "min", "max":
		// a selection, not arithmetic: a NaN keeps its bits
		less := ex.Fn == "min"
		return func(t *thread) float64 {
			m := a(t)
			for _, f := range args[1:] {
				if v := f(t); less && v < m || !less && v > m {
					m = v
				}
			}
			return m
		}
	}
	if f := mathUnary[ex.Fn]; f != nil {
		if ex.Fn == "modf" && ex.Second {
			f = modfFrac
		}
		return func(t *thread) float64 {
			v := a(t)
			if r := f(v); r == r {
				return r
			}
			return nan(v, v)
		}
	}
	if ex.Fn == "ldexp" {
		e := c.int(ex.Args[1])
		return func(t *thread) float64 {
			v := a(t)
			if r := math.Ldexp(v, int(clampExponent(e(t)))); r == r {
				return r
			}
			return nan(v, v)
		}
	}
	if ex.Fn == "deg" || ex.Fn == "rad" {
		// Lua 5.1's: x / (pi/180) and x * (pi/180), the constant in the
		// float type the translation writes it in
		k := math.Pi / 180
		if ex.T == Float32 {
			k = f32(k)
		}
		if ex.Fn == "deg" {
			return func(t *thread) float64 {
				v := a(t)
				if r := v / k; r == r {
					return r
				}
				return nan(v, v)
			}
		}
		return func(t *thread) float64 {
			v := a(t)
			if r := v * k; r == r {
				return r
			}
			return nan(v, v)
		}
	}
	f, b := mathBinary[ex.Fn], args[1]
	return func(t *thread) float64 {
		v, w := a(t), b(t)
		if r := f(v, w); r == r {
			return r
		}
		return nan(v, w)
	}
}

// mathUnary and mathBinary are the float functions of the math library,
// the Lua library's own (package lua51: C's, as glibc computes them, which
// for exp, log, pow and the trigonometric functions is the correctly
// rounded value), computed in float64 and rounded to float32 by the caller
// for float32 work, within CUDA's documented error of the GPU's sinf and
// the others.
var (
	mathUnary = map[string]func(float64) float64{
		"abs": math.Abs, "acos": lua51.Acos, "asin": lua51.Asin, "atan": lua51.Atan,
		"cos": lua51.Cos, "cosh": lua51.Cosh, "exp": lua51.Exp, "log": lua51.Log,
		"log10": lua51.Log10, "sin": lua51.Sin, "sinh": lua51.Sinh, "sqrt": math.Sqrt,
		"tan": lua51.Tan, "tanh": lua51.Tanh, "frexp": frexpMantissa, "modf": math.Trunc,
	}
	mathBinary = map[string]func(float64, float64) float64{
		"atan2": lua51.Atan2, "pow": lua51.Pow, "fmod": math.Mod,
	}
)

func frexpMantissa(x float64) float64 { m, _ := math.Frexp(x); return m }

// modfFrac is C's modf's fraction: the sign of x, and 0 for an infinity
// (where Go's math.Modf gives NaN).
func modfFrac(x float64) float64 {
	if math.IsInf(x, 0) {
		return math.Copysign(0, x)
	}
	return math.Copysign(x-math.Trunc(x), x)
}

// clampExponent keeps ldexp's exponent within C's int, where any value
// past ±100000 gives the same result (0 or infinity) as the exponent
// itself: the translation converts it the same way.
func clampExponent(e int64) int64 { return max(-100000, min(e, 100000)) }

func (c *compiler) int(x Expr) intFn {
	switch ex := x.(type) {
	case *Const:
		v := ex.I
		return func(*thread) int64 { return v }
	case *LocalGet:
		s := ex.Slot
		return func(t *thread) int64 { return t.ints[s] }
	case *Neg:
		f := c.int(ex.X)
		return func(t *thread) int64 { return -f(t) }
	case *Arith:
		return c.intArith(ex)
	case *Load:
		return c.intLoad(ex)
	case *Dim:
		return c.dim(ex.Arr, ex.K)
	case *Size:
		return c.size(ex.Arr)
	case *Math:
		return c.intMath(ex)
	case *Grid:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.bid[k]*t.run.block[k]+t.tid[k]) + 1 }
	case *GridSize:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.run.grid[k] * t.run.block[k]) }
	case *Thread:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.tid[k]) + 1 }
	case *Block:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.bid[k]) + 1 }
	case *BlockDim:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.run.block[k]) }
	case *GridDim:
		k := ex.Axis
		return func(t *thread) int64 { return int64(t.run.grid[k]) }
	case *Call:
		call, ret := c.call(ex), c.int(ex.Fn.Ret)
		return func(t *thread) int64 { return ret(call(t)) }
	case *Shfl:
		f := c.shfl(ex)
		return func(t *thread) int64 { return int64(f(t)) }
	case *LaneID:
		return func(t *thread) int64 {
			b := t.run.block
			return int64((t.tid[0]+t.tid[1]*b[0]+t.tid[2]*b[0]*b[1])%WarpSize) + 1
		}
	}
	panic(fmt.Sprintf("jit: no integer evaluation of %T", x))
}

func (c *compiler) intArith(ex *Arith) intFn {
	x, y := c.int(ex.X), c.int(ex.Y)
	switch ex.Op {
	case "+":
		return func(t *thread) int64 { return x(t) + y(t) }
	case "-":
		return func(t *thread) int64 { return x(t) - y(t) }
	case "*":
		return func(t *thread) int64 { return x(t) * y(t) }
	}
	trap := ex.Trap
	return func(t *thread) int64 {
		a, b := x(t), y(t)
		if b == 0 {
			// the typer gives every % whose divisor may be 0 a trap
			panic(runError{t.run.p.Traps[trap-1]})
		}
		// Go's % is C's (the dividend's sign, and 0 for the least int64
		// % -1); Lua's takes the divisor's sign
		r := a % b
		if r != 0 && (r^b) < 0 {
			r += b
		}
		return r
	}
}

func (c *compiler) intMath(ex *Math) intFn {
	if ex.Fn == "frexp" {
		x := c.float(ex.Args[0])
		return func(t *thread) int64 { _, e := math.Frexp(x(t)); return int64(e) }
	}
	if ex.Fn == "floor" || ex.Fn == "ceil" {
		round := math.Floor
		if ex.Fn == "ceil" {
			round = math.Ceil
		}
		if ex.Args[0].Type() == Int {
			return c.int(ex.Args[0])
		}
		f, trap := c.float(ex.Args[0]), ex.Trap
		return func(t *thread) int64 {
			v := round(f(t))
			if trap > 0 && !(v >= math.MinInt64 && v < 0x1p63) {
				panic(runError{t.run.p.Traps[trap-1]})
			}
			return int64(v)
		}
	}
	args := make([]intFn, len(ex.Args))
	for i, a := range ex.Args {
		args[i] = c.int(a)
	}
	switch ex.Fn {
	case "abs":
		return func(t *thread) int64 {
			if v := args[0](t); v < 0 {
				return -v
			} else {
				return v
			}
		}
	}
	less := ex.Fn == "min"
	return func(t *thread) int64 {
		m := args[0](t)
		for _, f := range args[1:] {
			if v := f(t); less && v < m || !less && v > m {
				m = v
			}
		}
		return m
	}
}

func (c *compiler) bool(x Expr) boolFn {
	switch ex := x.(type) {
	case *Const:
		v := ex.B
		return func(*thread) bool { return v }
	case *LocalGet:
		s := ex.Slot
		return func(t *thread) bool { return t.bools[s] }
	case *Not:
		f := c.bool(ex.X)
		return func(t *thread) bool { return !f(t) }
	case *Logic:
		x, y := c.bool(ex.X), c.bool(ex.Y)
		if ex.Op == "and" {
			return func(t *thread) bool { return x(t) && y(t) }
		}
		return func(t *thread) bool { return x(t) || y(t) }
	case *Compare:
		return c.compare(ex)
	}
	panic(fmt.Sprintf("jit: no boolean evaluation of %T", x))
}

func (c *compiler) compare(ex *Compare) boolFn {
	switch ex.X.Type() {
	case Bool:
		x, y := c.bool(ex.X), c.bool(ex.Y)
		eq := ex.Op == "=="
		return func(t *thread) bool { return (x(t) == y(t)) == eq }
	case Int:
		x, y := c.int(ex.X), c.int(ex.Y)
		return ordered(ex.Op, func(t *thread) (int64, int64) { return x(t), y(t) })
	}
	x, y := c.float(ex.X), c.float(ex.Y)
	return ordered(ex.Op, func(t *thread) (float64, float64) { return x(t), y(t) })
}

func ordered[T int64 | float64](op string, xy func(*thread) (T, T)) boolFn {
	switch op {
	case "==":
		return func(t *thread) bool { a, b := xy(t); return a == b }
	case "~=":
		return func(t *thread) bool { a, b := xy(t); return a != b }
	case "<":
		return func(t *thread) bool { a, b := xy(t); return a < b }
	case "<=":
		return func(t *thread) bool { a, b := xy(t); return a <= b }
	case ">":
		return func(t *thread) bool { a, b := xy(t); return a > b }
	}
	return func(t *thread) bool { a, b := xy(t); return a >= b }
}

// maxFuncParams bounds a Func's parameters, so that a call evaluates its
// arguments into arrays on the Go stack.
const maxFuncParams = 8

// call evaluates a Call's arguments in the caller's locals, then runs the
// function's body in its frame (zeroed, as the translation declares its
// locals) and returns the frame, for the caller to evaluate Ret in. The
// arguments are all evaluated before any parameter is set, so a call
// among the arguments may use the same frame.
func (c *compiler) call(ex *Call) func(*thread) *thread {
	f := ex.Fn
	if len(f.Params) > maxFuncParams || len(ex.Args) != len(f.Params) {
		panic(fmt.Sprintf("jit: a call of %s with %d arguments for %d parameters", f.Name, len(ex.Args), len(f.Params)))
	}
	k := -1
	for i, g := range c.p.Funcs {
		if g == f {
			k = i
		}
	}
	if k < 0 {
		panic("jit: a call of " + f.Name + ", which is not among the program's functions")
	}
	ints := make([]intFn, len(ex.Args))
	floats := make([]floatFn, len(ex.Args))
	bools := make([]boolFn, len(ex.Args))
	for i, a := range ex.Args {
		switch a.Type() {
		case Int:
			ints[i] = c.int(a)
		case Bool:
			bools[i] = c.bool(a)
		default:
			floats[i] = c.float(a)
		}
	}
	body := c.stmts(f.Body)
	return func(t *thread) *thread {
		var iv [maxFuncParams]int64
		var fv [maxFuncParams]float64
		var bv [maxFuncParams]bool
		for i := range ex.Args {
			switch {
			case ints[i] != nil:
				iv[i] = ints[i](t)
			case bools[i] != nil:
				bv[i] = bools[i](t)
			default:
				fv[i] = floats[i](t)
			}
		}
		fr := t.frame(k, f)
		for i, slot := range f.Params {
			fr.ints[slot], fr.floats[slot], fr.bools[slot] = iv[i], fv[i], bv[i]
		}
		body(fr)
		return fr
	}
}

// callSet evaluates a call and copies each of its values into the
// caller's locals.
func (c *compiler) callSet(st *CallSet) stmtFn {
	call, f := c.call(st.Call), st.Call.Fn
	return func(t *thread) flow {
		fr := call(t)
		for i, r := range f.Results {
			s := st.Slots[i]
			t.ints[s], t.floats[s], t.bools[s] = fr.ints[r], fr.floats[r], fr.bools[r]
		}
		return next
	}
}

// frame is the k-th Func's locals for this thread, zeroed; it sees the
// thread's place in the grid, its block and its warp, for
// kernels.threadIdx, kernels.syncthreads and the shuffles in a device
// function.
func (t *thread) frame(k int, f *Func) *thread {
	if t.frames == nil {
		t.frames = make([]*thread, len(t.run.p.Funcs))
	}
	fr := t.frames[k]
	if fr == nil {
		n := len(f.Locals)
		fr = &thread{ints: make([]int64, n), floats: make([]float64, n), bools: make([]bool, n), run: t.run}
		t.frames[k] = fr
	} else {
		clear(fr.ints)
		clear(fr.floats)
		clear(fr.bools)
	}
	fr.tid, fr.bid, fr.block, fr.shared, fr.warp, fr.lane = t.tid, t.bid, t.block, t.shared, t.warp, t.lane
	return fr
}

// runError is a failure inside a thread, carried by panic to the block.
type runError struct{ err *Error }

// shapeText writes a shape as the bounds error shows it: (4, 3).
func shapeText(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// BoundsError is the message of an index out of range, the same for the
// CPU and for a GPU launch with check_bounds.
func BoundsError(p *Program, arr *Array, line int, idx []int64, shape []int) *Error {
	parts := make([]string, len(idx))
	for i, v := range idx {
		parts[i] = fmt.Sprintf("[%d]", v)
	}
	return &Error{Chunk: p.Chunk, Line: line, Msg: fmt.Sprintf("index %s%s is out of bounds: %s has shape %s", arr.Name, strings.Join(parts, ""), arr.Name, shapeText(shape))}
}
