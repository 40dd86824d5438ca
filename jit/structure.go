package jit

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/lua51"
)

// indexNames are CUDA's built-in index variables, kernels.<name>.x/.y/.z in
// a kernel; threadIdx and blockIdx count from 1, as kernels.grid does.
var indexNames = map[string]bool{"threadIdx": true, "blockIdx": true, "blockDim": true, "gridDim": true}

// IndexNames are kernels.threadIdx and its kind, sorted.
func IndexNames() []string { return []string{"blockDim", "blockIdx", "gridDim", "threadIdx"} }

var axisNames = map[string]int{"x": 0, "y": 1, "z": 2}

// kernelsField accepts kernels.threadIdx.x and its kind, reporting
// whether ex is one.
func (p *parser) kernelsField(ex *ast.AttrGetExpr) bool {
	if mod, name := p.library(ex); mod == "kernels" && indexNames[name] {
		p.fail(ex.Line(), "kernels.%s is read as kernels.%s.x, .y or .z", name, name)
	}
	inner, ok := ex.Object.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	mod, name := p.library(inner)
	if mod != "kernels" || !indexNames[name] {
		return false
	}
	if p.mapFn {
		p.fail(ex.Line(), "kernels.%s is not allowed in a map function; it computes one element from its arguments' elements", name)
	}
	if k, ok := ex.Key.(*ast.StringExpr); !ok || k.Value != "x" && k.Value != "y" && k.Value != "z" {
		p.fail(ex.Line(), "kernels.%s has the fields x, y and z, not %s", keyText(inner.Key), luaText(ex.Key))
	}
	return true
}

// indexField types kernels.threadIdx.x and its kind; nil if ex is none.
func (t *typer) indexField(ex *ast.AttrGetExpr) Expr {
	inner, ok := ex.Object.(*ast.AttrGetExpr)
	if !ok {
		return nil
	}
	mod, name := t.library(inner)
	if mod != "kernels" || !indexNames[name] {
		return nil
	}
	axis := axisNames[keyText(ex.Key)]
	switch name {
	case "threadIdx":
		return &Thread{Axis: axis}
	case "blockIdx":
		return &Block{Axis: axis}
	case "blockDim":
		return &BlockDim{Axis: axis}
	}
	return &GridDim{Axis: axis}
}

// numbaNames are Numba's spellings of what glua names otherwise, as a
// path after `cuda.`; the others (cuda.threadIdx.x, cuda.grid) become
// kernels.<the same path>.
var numbaNames = map[string]string{
	"shared.array": "kernels.shared", "local.array": "kernels.local_array",
	"shfl_down_sync": "kernels.shfl_down", "shfl_xor_sync": "kernels.shfl_xor",
}

// numbaKernels are Numba's names that glua's kernels module spells the same.
var numbaKernels = map[string]bool{
	"grid": true, "gridsize": true, "syncthreads": true, "syncwarp": true, "laneid": true, "warpsize": true,
}

// numba refuses Numba's cuda.<name> in a kernel, naming glua's spelling,
// so that a ported kernel fails with the fix rather than with "upvalue".
func (p *parser) numba(e ast.Expr) {
	var path []string
	for {
		a, ok := e.(*ast.AttrGetExpr)
		if !ok {
			break
		}
		k, ok := a.Key.(*ast.StringExpr)
		if !ok {
			return
		}
		path = append([]string{k.Value}, path...)
		e = a.Object
	}
	id, ok := e.(*ast.IdentExpr)
	if !ok || id.Value != "cuda" || p.isLocal("cuda") || len(path) == 0 {
		return
	}
	numba := "cuda." + strings.Join(path, ".")
	glua, known := numbaNames[strings.Join(path, ".")]
	switch {
	case known:
	case indexNames[path[0]]:
		glua = "kernels." + strings.Join(path, ".")
		if path[0] == "threadIdx" || path[0] == "blockIdx" {
			glua += " (1-based, as kernels.grid and Lua's arrays)"
		}
	case numbaKernels[path[0]]:
		glua = "kernels." + path[0]
	case path[0] == "atomic" && len(path) == 2:
		glua = "kernels.atomic_" + path[1]
	default:
		p.fail(id.Line(), "%s is not allowed in a kernel (the cuda module's functions run on the host)", numba)
	}
	p.fail(id.Line(), "%s is Numba's spelling; in a glua kernel write %s", numba, glua)
}

// dimsArg is kernels.grid's and kernels.gridsize's argument: a literal
// 1, 2 or 3, because it decides how many values the call gives.
func dimsArg(e ast.Expr) (int, error) {
	n, isNum := e.(*ast.NumberExpr)
	dims, err := strconv.Atoi(valueOr(n))
	if !isNum || err != nil || dims < 1 || dims > 3 {
		return 0, errors.New("takes the number of dimensions, 1, 2 or 3, as a literal")
	}
	return dims, nil
}

// gridCounts checks, where kernels.grid(n) or kernels.gridsize(n) gives
// values to names, that n values go to n names: the last expression of
// an assignment gives the names left, any other one.
func (p *parser) gridCounts(exprs []ast.Expr, names int) {
	for i, e := range exprs {
		c, ok := e.(*ast.FuncCallExpr)
		if !ok || c.Func == nil || len(c.Args) != 1 {
			continue
		}
		mod, name := p.library(c.Func)
		if mod != "kernels" || name != "grid" && name != "gridsize" {
			continue
		}
		dims, err := dimsArg(c.Args[0])
		if err != nil {
			p.fail(c.Line(), "kernels.%s %v", name, err)
		}
		want := 1
		if i == len(exprs)-1 {
			want = max(1, names-i)
		}
		if dims != want {
			p.fail(c.Line(), "kernels.%s(%d) gives %d value(s), assigned to %d name(s)", name, dims, dims, want)
		}
	}
}

// shapeIndex checks that A.shape[k] has a literal k: each dimension is a
// parameter of the translated kernel of its own.
func (p *parser) shapeIndex(ex *ast.AttrGetExpr) {
	inner, ok := ex.Object.(*ast.AttrGetExpr)
	if !ok {
		return
	}
	if k, isString := inner.Key.(*ast.StringExpr); !isString || k.Value != "shape" {
		return
	}
	if _, ok := ex.Key.(*ast.NumberExpr); !ok {
		p.fail(ex.Line(), "%s.shape[k] needs k to be a number literal", luaText(inner.Object))
	}
}

// maxLocalBytes is CUDA's limit of local memory per thread (the CUDA C
// Programming Guide's table of technical specifications: 512 KiB).
const maxLocalBytes = 512 << 10

// arrayArgs checks kernels.shared(n or {m, n}, dtype) and
// kernels.local_array: the shape constants (literals, captured numbers and
// arithmetic of them) and the dtype a literal, because the array is sized
// when the kernel is compiled. A shape of literals is checked now.
func (p *parser) arrayArgs(ex *ast.FuncCallExpr, name string) {
	line := ex.Line()
	dimExprs := shapeExprs(ex.Args[0])
	if len(dimExprs) == 0 || len(dimExprs) > 3 {
		p.fail(line, "kernels.%s's shape is a length or a table of 1 to 3 lengths, as {m, n}", name)
	}
	literal := true
	for _, d := range dimExprs {
		if !p.constExpr(d) {
			p.fail(d.Line(), "kernels.%s's shape must be known when the kernel is compiled: number literals, or locals of the script holding numbers, not %s", name, luaText(d))
		}
		literal = literal && !mentionsName(d)
	}
	s, ok := ex.Args[1].(*ast.StringExpr)
	if !ok {
		p.fail(line, "kernels.%s's dtype must be a string literal such as \"float32\"", name)
	}
	d, err := device.ParseDType(s.Value)
	if err != nil {
		p.fail(line, "kernels.%s: %v", name, err)
	}
	if !literal {
		return
	}
	dims := make([]float64, len(dimExprs))
	for i, d := range dimExprs {
		dims[i], _ = constValue(d, nil)
	}
	if _, err := fixedShape(name, dims, d, p.sharedMax); err != nil {
		p.fail(line, "%v", err)
	}
}

// shapeExprs are the lengths of a shape argument: n, or the fields of {m, n}.
func shapeExprs(e ast.Expr) []ast.Expr {
	tbl, ok := e.(*ast.TableExpr)
	if !ok {
		return []ast.Expr{e}
	}
	out := make([]ast.Expr, 0, len(tbl.Fields))
	for _, f := range tbl.Fields {
		if f.Key != nil {
			return nil
		}
		out = append(out, f.Value)
	}
	return out
}

// constExpr reports whether e is known when the kernel is compiled.
func (p *parser) constExpr(e ast.Expr) bool {
	switch ex := e.(type) {
	case *ast.NumberExpr:
		return true
	case *ast.IdentExpr:
		return p.isCaptured(ex.Value, ex.Line())
	case *ast.ArithmeticOpExpr:
		return p.constExpr(ex.Lhs) && p.constExpr(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		return p.constExpr(ex.Expr)
	}
	return false
}

func mentionsName(e ast.Expr) bool {
	switch ex := e.(type) {
	case *ast.IdentExpr:
		return true
	case *ast.ArithmeticOpExpr:
		return mentionsName(ex.Lhs) || mentionsName(ex.Rhs)
	case *ast.UnaryMinusOpExpr:
		return mentionsName(ex.Expr)
	}
	return false
}

// constValue evaluates a constant expression as Lua would; lookup reads a
// captured number.
func constValue(e ast.Expr, lookup func(name string, line int) float64) (float64, error) {
	switch ex := e.(type) {
	case *ast.NumberExpr:
		return parseNumber(ex.Value)
	case *ast.IdentExpr:
		return lookup(ex.Value, ex.Line()), nil
	case *ast.UnaryMinusOpExpr:
		v, err := constValue(ex.Expr, lookup)
		return -v, err
	case *ast.ArithmeticOpExpr:
		a, err := constValue(ex.Lhs, lookup)
		if err != nil {
			return 0, err
		}
		b, err := constValue(ex.Rhs, lookup)
		switch ex.Operator {
		case "+":
			return a + b, err
		case "-":
			return a - b, err
		case "*":
			return a * b, err
		case "/":
			return a / b, err
		case "%":
			return a - math.Floor(a/b)*b, err
		}
		return lua51.Pow(a, b), err
	}
	return 0, fmt.Errorf("%s is not a constant", luaText(e))
}

// fixedShape checks the shape of a shared or local array: positive
// integers, and no more bytes than a block (shared, when sharedMax is
// known) or a thread (local) can hold.
func fixedShape(name string, dims []float64, d device.DType, sharedMax int) ([]int, error) {
	shape := make([]int, len(dims))
	total := float64(d.Size())
	for _, v := range dims {
		if v != math.Trunc(v) || v < 1 {
			return nil, fmt.Errorf("kernels.%s's lengths must be positive integers, got %s", name, strconv.FormatFloat(v, 'g', -1, 64))
		}
		total *= v
	}
	text := shapeLiteral(dims)
	switch {
	case name == "local_array" && total > maxLocalBytes:
		return nil, fmt.Errorf("kernels.local_array(%s, %q) is %s bytes, too large for a thread: CUDA gives a thread at most %d bytes of local memory", text, d.String(), strconv.FormatFloat(total, 'f', -1, 64), maxLocalBytes)
	case name == "shared" && sharedMax > 0 && total > float64(sharedMax):
		return nil, fmt.Errorf("kernels.shared(%s, %q) is %s bytes, too large for a block: the device gives a block at most %d bytes of static shared memory (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)", text, d.String(), strconv.FormatFloat(total, 'f', -1, 64), sharedMax)
	case total > math.MaxInt32:
		return nil, fmt.Errorf("kernels.%s(%s, %q) is %s bytes, too large for a block", name, text, d.String(), strconv.FormatFloat(total, 'f', -1, 64))
	}
	for i, v := range dims {
		shape[i] = int(v)
	}
	return shape, nil
}

func shapeLiteral(dims []float64) string {
	parts := make([]string, len(dims))
	for i, v := range dims {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// fixedArray declares kernels.shared(shape, dtype) (one array per block)
// or kernels.local_array(shape, dtype) (one per thread), its shape
// evaluated with the captured numbers as they are now.
func (t *typer) fixedArray(name string, call *ast.FuncCallExpr) *Array {
	line := call.Line()
	_, fn := t.library(call.Func)
	exprs := shapeExprs(call.Args[0])
	dims := make([]float64, len(exprs))
	lookup := func(n string, l int) float64 {
		c := t.captureOf(n, l)
		if c.Kind != "number" {
			t.fail(l, "kernels.%s's shape: %s is a function, not a number", fn, n)
		}
		return c.Number
	}
	for i, e := range exprs {
		v, err := constValue(e, lookup)
		if err != nil {
			t.fail(line, "kernels.%s: %v", fn, err)
		}
		dims[i] = v
	}
	d, err := device.ParseDType(call.Args[1].(*ast.StringExpr).Value)
	if err != nil {
		t.fail(line, "kernels.%s: %v", fn, err)
	}
	shape, err := fixedShape(fn, dims, d, t.sharedMax)
	if err != nil {
		t.fail(line, "%v", err)
	}
	size := 1
	for _, n := range shape {
		size *= n
	}
	arr := &Array{Name: name, DType: d, Rank: len(shape), Param: -1, Shared: -1, Size: size, Shape: shape}
	if fn == "shared" {
		arr.Shared = len(t.prog.Shared)
		t.prog.Shared = append(t.prog.Shared, arr)
	} else {
		t.prog.LocalArrays = append(t.prog.LocalArrays, arr)
		arr.Local = len(t.prog.LocalArrays)
	}
	return arr
}

// isFixedArray reports kernels.shared(...) or kernels.local_array(...).
func (t *typer) isFixedArray(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.Func == nil {
		return false
	}
	mod, name := t.library(c.Func)
	return mod == "kernels" && (name == "shared" || name == "local_array")
}
