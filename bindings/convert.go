package bindings

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

const (
	deviceArrayType = "glua.DeviceArray"
	hostArrayType   = "glua.HostArray"
	// methodsField is the metatable field that holds a type's methods when
	// its __index is a function (the arrays compute fields and elements),
	// so that what lists a type's methods (the REPL's completion, the Lua
	// API reference's test) finds them as it finds another type's in its
	// __index table.
	methodsField = "__methods"
	// maxTableElements bounds to_table and table uploads: beyond it a Lua
	// table costs far more memory than the array and the user wants
	// copy_to_host or a HostArray instead.
	maxTableElements = 1 << 24
)

func pushHost(L *lua.LState, h *runtime.HostArray) { pushUserData(L, h, hostArrayType) }

// pushUserData pushes v with the named metatable. The metatable is read
// from the registry directly: GetTypeMetatable goes through GetField's
// metamethod machinery, a tenth of an alloc+free from a Lua loop.
func pushUserData(L *lua.LState, v any, typ string) { L.Push(userData(L, v, typ)) }

// userData is v as a userdata of the named type.
func userData(L *lua.LState, v any, typ string) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = v
	ud.Metatable = L.G.Registry.RawGetString(typ)
	return ud
}

// toArray returns the DeviceArray at argument n, or nil if it is not one.
func toArray(L *lua.LState, n int) *runtime.Array {
	a, _ := userValue[*runtime.Array](L.Get(n))
	return a
}

func toHost(L *lua.LState, n int) *runtime.HostArray {
	h, _ := userValue[*runtime.HostArray](L.Get(n))
	return h
}

func checkArray(L *lua.LState, name string, n int) *runtime.Array {
	return checkUser[*runtime.Array](L, name, n, deviceArrayKind)
}

func checkHost(L *lua.LState, name string, n int) *runtime.HostArray {
	return checkUser[*runtime.HostArray](L, name, n, hostArrayKind)
}

// checkNumber reads a number argument, which the message calls what.
func checkNumber(L *lua.LState, name string, n int, what string) float64 {
	v, ok := L.Get(n).(lua.LNumber)
	if !ok {
		argError(L, name, n, "%s must be a number, got %s", what, typeName(L.Get(n)))
	}
	return float64(v)
}

// checkPath reads a file path at stack slot n: a non-empty string.
func checkPath(L *lua.LState, name string, n int) string {
	s, ok := L.Get(n).(lua.LString)
	if !ok {
		argError(L, name, n, "path must be a string, got %s", typeName(L.Get(n)))
	}
	if s == "" {
		argError(L, name, n, "path is empty")
	}
	return string(s)
}

// checkInt reads an integer argument: a Lua number with no fraction.
func checkInt(L *lua.LState, name string, n int, what string) int {
	v := L.Get(n)
	num, ok := v.(lua.LNumber)
	if !ok {
		argError(L, name, n, "%s must be an integer, got %s", what, typeName(v))
	}
	i, ok := intOf(float64(num))
	if !ok {
		argError(L, name, n, "%s must be an integer, got %s", what, valueText(num))
	}
	return i
}

func intOf(f float64) (int, bool) {
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// checkShape reads a shape: a number (1-D) or a table of numbers.
func checkShape(L *lua.LState, name string, n int) []int {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		d, ok := intOf(float64(v))
		if !ok || d < 0 {
			argError(L, name, n, "shape must be a non-negative integer or a table of them, got %s", valueText(v))
		}
		return []int{d}
	case *lua.LTable:
		shape, err := shapeOf(v, false)
		if err != nil {
			argError(L, name, n, "%s", err)
		}
		return shape
	default:
		argError(L, name, n, "shape expected (a number or a table of numbers), got %s", typeName(v))
		return nil
	}
}

// shapeOf reads a table of dimensions; allowInfer admits one -1 (reshape).
func shapeOf(t *lua.LTable, allowInfer bool) ([]int, error) {
	n := t.Len()
	if n == 0 {
		return nil, fmt.Errorf("shape must have at least one dimension")
	}
	if err := device.CheckDims(n); err != nil {
		return nil, err
	}
	if k := otherKey(t, n); k != lua.LNil {
		return nil, fmt.Errorf("shape has %s; a shape is a list of dimensions, keys 1..n only", keyText(k))
	}
	shape := make([]int, n)
	for i := 1; i <= n; i++ {
		v, ok := t.RawGetInt(i).(lua.LNumber)
		if !ok {
			return nil, fmt.Errorf("shape[%d] must be a number, got %s", i, typeName(t.RawGetInt(i)))
		}
		d, ok := intOf(float64(v))
		if !ok || (d < 0 && !(allowInfer && d == -1)) {
			return nil, fmt.Errorf("shape[%d] must be a non-negative integer, got %s", i, valueText(v))
		}
		shape[i-1] = d
	}
	return shape, nil
}

// optDType reads an optional dtype name at argument n.
func optDType(L *lua.LState, name string, n int, def device.DType) device.DType {
	v := L.Get(n)
	if v == lua.LNil {
		return def
	}
	s, ok := v.(lua.LString)
	if !ok {
		argError(L, name, n, "dtype must be a string such as \"float32\", got %s", typeName(v))
	}
	dt, err := device.ParseDType(string(s))
	if err != nil {
		argError(L, name, n, "%s", err)
	}
	return dt
}

// noOptions is the options table of a call that gave none. It is only
// read, so every call shares it: a new table each time was an allocation
// on every launch of a kernel that takes options (kernels.matmul).
var noOptions = &lua.LTable{Metatable: lua.LNil}

// options reads an optional table of named options; any key not in allowed
// is an error, because a misspelt option silently ignored is a wrong answer.
func options(L *lua.LState, name string, n int, allowed ...string) *lua.LTable {
	v := L.Get(n)
	if v == lua.LNil {
		return noOptions
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		argError(L, name, n, "options table expected, got %s", typeName(v))
	}
	t.ForEach(func(k, _ lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || !contains(allowed, string(ks)) {
			sort.Strings(allowed)
			argError(L, name, n, "unknown option %s (expected %s)", valueText(k), strings.Join(allowed, ", "))
		}
	})
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func optNumber(L *lua.LState, name string, t *lua.LTable, key string, def float64) float64 {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return def
	case lua.LNumber:
		return float64(v)
	default:
		badArgument(L, "%s: option %s must be a number, got %s", name, key, typeName(v))
		return 0
	}
}

func optBool(L *lua.LState, name string, t *lua.LTable, key string, def bool) bool {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return def
	case lua.LBool:
		return bool(v)
	default:
		badArgument(L, "%s: option %s must be a boolean, got %s", name, key, typeName(v))
		return false
	}
}

func optString(L *lua.LState, name string, t *lua.LTable, key string, def string) string {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return def
	case lua.LString:
		return string(v)
	default:
		badArgument(L, "%s: option %s must be a string, got %s", name, key, typeName(v))
		return ""
	}
}

// tableToHost converts a (nested) Lua table of numbers into a host array.
// The shape is read from the first element at each depth; every other row
// must match it.
func tableToHost(t *lua.LTable, dt device.DType) (*runtime.HostArray, error) {
	shape, err := tableShape(t)
	if err != nil {
		return nil, err
	}
	size := 1
	for _, d := range shape {
		size *= d
	}
	values, err := flatten(t, shape, make([]float64, 0, size))
	if err != nil {
		return nil, err
	}
	return runtime.HostArrayFromFloats(values, shape, dt)
}

// tableShape is the shape a nested table claims by its first elements.
func tableShape(t *lua.LTable) ([]int, error) {
	var shape []int
	size := 1
	for v := lua.LValue(t); ; {
		tt, ok := v.(*lua.LTable)
		if !ok {
			return shape, nil
		}
		shape = append(shape, tt.Len())
		if len(shape) > 32 {
			return nil, fmt.Errorf("table nests deeper than 32 levels")
		}
		if size *= tt.Len(); size > maxTableElements {
			return nil, fmt.Errorf("table has more than %d elements; build a HostArray instead", maxTableElements)
		}
		if tt.Len() == 0 {
			return shape, nil
		}
		v = tt.RawGetInt(1)
	}
}

// flatten appends t's numbers to values in row-major order, checking that
// every row has the shape's length. An error names the element by its
// indices, which are put together only then, on the way out.
func flatten(t *lua.LTable, shape []int, values []float64) ([]float64, error) {
	if t.Len() != shape[0] {
		return nil, &tableError{format: "ragged table: %s has %d elements but the first at that depth has %d", row: true, args: []any{t.Len(), shape[0]}}
	}
	if k := otherKey(t, shape[0]); k != lua.LNil {
		return nil, &tableError{format: "%s has %s; arrays are lists, keys 1..n only", row: true, args: []any{keyText(k)}}
	}
	for i := 1; i <= shape[0]; i++ {
		v := t.RawGetInt(i)
		var err error
		if len(shape) > 1 {
			sub, ok := v.(*lua.LTable)
			if !ok {
				err = badElement(v, "ragged table: element %s is a %s, expected a table")
			} else {
				values, err = flatten(sub, shape[1:], values)
			}
		} else if num, ok := v.(lua.LNumber); ok {
			values = append(values, float64(num))
		} else {
			err = badElement(v, "element %s is a %s, expected a number")
		}
		if err != nil {
			err.(*tableError).path = append(err.(*tableError).path, i)
			return nil, err
		}
	}
	return values, nil
}

// badElement is the error for an element v that is not what the table's
// shape asks for, format saying what that is; a nil is a hole.
func badElement(v lua.LValue, format string) *tableError {
	if v == lua.LNil {
		return &tableError{format: "element %s is nil, a hole; arrays are lists, keys 1..n only"}
	}
	return &tableError{format: format, args: []any{typeName(v)}}
}

// otherKey is the first key of t that is not one of 1..n, where n is
// t.Len(), or nil when t is a list. gopher-lua keeps a list's elements in
// an array and the other keys in hashes, so asking for the key after n
// looks at the hashes, not at the elements: a list costs nothing to check.
func otherKey(t *lua.LTable, n int) lua.LValue {
	var after lua.LValue
	switch {
	case n == 0:
		after = lua.LNil // Next(0) would start after the hashes' first key
	case n < len(listEnds):
		after = listEnds[n]
	default:
		after = lua.LNumber(n)
	}
	k, _ := t.Next(after)
	return k
}

// listEnds are the keys otherKey asks Next about for short lists, made
// once: a number made a Lua value is an allocation, which for a list of a
// few elements would cost a tenth of its upload.
var listEnds = func() (keys [256]lua.LValue) {
	for i := range keys {
		keys[i] = lua.LNumber(i)
	}
	return keys
}()

// checkList says what keeps t from being a list of items: a key other
// than 1..n, or a hole (a nil below n), where a loop to # would skip what
// follows. Its message continues one naming t.
func checkList(t *lua.LTable, item string) error {
	n := t.Len()
	if k := otherKey(t, n); k != lua.LNil {
		return fmt.Errorf("has %s; it is a list, keys 1..n only", keyText(k))
	}
	for i := 1; i <= n; i++ {
		if t.RawGetInt(i) == lua.LNil {
			return fmt.Errorf("has a hole: %s %d is nil; it is a list, keys 1..n only", item, i)
		}
	}
	return nil
}

// keyText names a key for a message: key "a", key 0, key true, or a table
// as a key.
func keyText(k lua.LValue) string {
	switch k := k.(type) {
	case lua.LString:
		return "key " + strconv.Quote(string(k))
	case lua.LNumber, lua.LBool:
		return "key " + valueText(k)
	}
	return "a " + typeName(k) + " as a key"
}

// tableError is a bad element or row of a table being converted; path
// holds its indices innermost first. row says whether the message is about
// the row that holds the element rather than the element itself.
type tableError struct {
	format string
	args   []any
	path   []int
	row    bool
}

func (e *tableError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "[%d]", e.path[i])
	}
	where := b.String()
	if e.row {
		where = rowName(where)
	}
	return fmt.Sprintf(e.format, append([]any{where}, e.args...)...)
}

func rowName(path string) string {
	if path == "" {
		return "the table"
	}
	return "row " + path
}

// hostToTable builds a nested Lua table from host data.
func hostToTable(L *lua.LState, h *runtime.HostArray) (*lua.LTable, error) {
	if h.Size() > maxTableElements {
		return nil, errTooLargeForTable(h.Size())
	}
	values, err := h.Float64s()
	if err != nil {
		return nil, err
	}
	shape := h.Shape()
	var build func(depth, offset int) *lua.LTable
	build = func(depth, offset int) *lua.LTable {
		t := L.CreateTable(shape[depth], 0)
		stride := 1
		for _, d := range shape[depth+1:] {
			stride *= d
		}
		for i := 0; i < shape[depth]; i++ {
			if depth+1 == len(shape) {
				t.RawSetInt(i+1, lua.LNumber(values[offset+i]))
			} else {
				t.RawSetInt(i+1, build(depth+1, offset+i*stride))
			}
		}
		return t
	}
	return build(0, 0), nil
}

func shapeTable(L *lua.LState, shape []int) *lua.LTable {
	t := L.CreateTable(len(shape), 0)
	for i, d := range shape {
		t.RawSetInt(i+1, lua.LNumber(d))
	}
	return t
}
