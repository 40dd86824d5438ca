package kernels

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/numpytest"
)

var intDTypes = []device.DType{device.Int32, device.Int64, device.Uint8}

// intLimits are each integer dtype's extremes and its middle, around which
// nearIntLimits draws.
var intLimits = map[device.DType][]int64{
	device.Int32: {math.MinInt32, math.MaxInt32, 0, -1, 1 << 16},
	device.Int64: {math.MinInt64, math.MaxInt64, 0, -1, 1 << 32, 1 << 53},
	device.Uint8: {0, 255, 127, 128},
}

// nearIntLimits returns n elements of the integer dtype dt: a quarter any
// bits, a quarter within two of a limit (so sums, differences and products
// wrap), the rest small, so that quotients are not all 0 or -1.
func nearIntLimits(rng *rand.Rand, dt device.DType, n int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range n {
		var v uint64
		switch rng.IntN(4) {
		case 0:
			v = rng.Uint64()
		case 1:
			lims := intLimits[dt]
			v = uint64(lims[rng.IntN(len(lims))] + int64(rng.IntN(5)-2))
		case 2:
			v = uint64(int64(rng.IntN(21) - 10))
		default:
			v = uint64(int64(rng.IntN(2001) - 1000))
		}
		for k := range dt.Size() {
			b[i*dt.Size()+k] = byte(v >> (8 * k))
		}
	}
	return b
}

// intScalars are numbers for the kernels of every integer dtype: each
// wraps into the dtype modulo 2^bits, several of them across its range
// (-1 into a uint8 is 255, 2^40 + 3 into an int32 is 3), and 0 and -1
// divide by zero and negate the smallest value.
var intScalars = []float64{0, 1, -1, 2, -2, 3, -7, 255, 256, -129, 127, 1000,
	math.MaxInt32, math.MinInt32, 1<<40 + 3, -(1 << 62), 0x1p63 - 1024, -0x1p63 + 2048, 1e15 + 1}

// numpyIntOps computes each elementwise kernel on integers with NumPy,
// whose arithmetic on arrays of one integer dtype wraps; y is the first
// array, x the second (a one-array kernel's array is x), a the number as
// an array of the dtype, wrapped into it by astype.
const numpyIntOps = `
import json, sys
import numpy as np
np.seterr(all="ignore")

def floor_div(y, x):
    # NumPy's // where x != 0; glua's documented 0 where x == 0.
    nz = x != 0
    return np.where(nz, np.floor_divide(y, np.where(nz, x, 1)), 0).astype(y.dtype)

ops = {
    "scale": lambda y, x, a: x * a,
    "axpy": lambda y, x, a: a * x + y,
    "add": lambda y, x, a: y + x,
    "mul": lambda y, x, a: y * x,
    "sub": lambda y, x, a: y - x,
    "div": lambda y, x, a: floor_div(y, x),
    "add_scalar": lambda y, x, a: x + a,
    "div_scalar": lambda y, x, a: floor_div(x, a),
    "rsub": lambda y, x, a: a - x,
    "rdiv": lambda y, x, a: floor_div(a, x),
    "maximum": lambda y, x, a: np.maximum(y, x),
    "minimum": lambda y, x, a: np.minimum(y, x),
}
d = sys.argv[1]
out = []
for c in json.load(open(d + "/cases.json")):
    dt = np.dtype(c["dtype"]).newbyteorder("<")
    y = np.fromfile(d + "/" + c["y"], dtype=dt)
    x = np.fromfile(d + "/" + c["x"], dtype=dt)
    if c["op"] == "sum":
        out.append(str(int(np.sum(y, dtype=np.int64))))
        continue
    if c["op"] == "max_abs_diff":
        out.append(str(max((abs(int(p) - int(q)) for p, q in zip(y, x)), default=0)))
        continue
    a = np.full(x.shape, np.array(int(c["a"]), dtype=np.int64).astype(dt), dtype=dt)
    r = ops[c["op"]](y, x, a)
    assert r.dtype == dt, (c, r.dtype)
    r.tofile(d + "/" + c["out"])
print("\n".join(out))
`

type numpyCase struct {
	Op    string `json:"op"`
	DType string `json:"dtype"`
	A     int64  `json:"a"`
	Y     string `json:"y"`
	X     string `json:"x"`
	Out   string `json:"out"`

	dt   device.DType
	y, x []byte
	a    float64
}

// TestIntegerKernelsMatchNumPyNearTheLimits runs every elementwise kernel,
// Sum and MaxAbsDiff on every integer dtype with values and numbers near
// the dtype's limits, and NumPy on the same: the bits must be equal,
// wrap-around, floor division and the numbers' wrap into the dtype
// included.
func TestIntegerKernelsMatchNumPyNearTheLimits(t *testing.T) {
	numpytest.Python(t)
	rng := newRand(t)
	dir := t.TempDir()
	var cases []*numpyCase
	add := func(c *numpyCase) {
		k := len(cases)
		c.DType, c.Y, c.X, c.Out = c.dt.String(), fmt.Sprintf("y%d", k), fmt.Sprintf("x%d", k), fmt.Sprintf("out%d", k)
		for name, b := range map[string][]byte{c.Y: c.y, c.X: c.x} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cases = append(cases, c)
	}
	const n = 600
	for _, op := range ElementwiseOps() {
		for _, dt := range intDTypes {
			for _, a := range intScalars {
				if op.Scalar == "" && a != 0 {
					continue
				}
				ia, ok := IntegerScalar(a)
				if !ok {
					t.Fatalf("%v is not an integer scalar", a)
				}
				add(&numpyCase{Op: op.Name, A: ia, a: a, dt: dt, y: nearIntLimits(rng, dt, n), x: nearIntLimits(rng, dt, n)})
			}
		}
	}
	for _, dt := range intDTypes {
		for _, op := range []string{"sum", "max_abs_diff"} {
			for _, m := range []int{0, 1, 1000, 100000} {
				add(&numpyCase{Op: op, dt: dt, y: nearIntLimits(rng, dt, m), x: nearIntLimits(rng, dt, m)})
			}
		}
	}
	manifest, _ := json.Marshal(cases)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	printed := strings.Fields(numpytest.Run(t, numpyIntOps, dir))
	for _, c := range cases {
		what := fmt.Sprintf("%s %s a=%v", c.Op, c.dt, c.a)
		switch c.Op {
		case "sum":
			want, err := strconv.ParseInt(printed[0], 10, 64)
			if err != nil {
				t.Fatalf("%s: NumPy printed %q", what, printed[0])
			}
			printed = printed[1:]
			if got := Sum(c.dt, c.y); got != float64(want) {
				t.Errorf("%s of %d elements: %v, NumPy's int64 sum is %d", what, len(c.y)/c.dt.Size(), got, want)
			}
			continue
		case "max_abs_diff":
			want, err := strconv.ParseUint(printed[0], 10, 64)
			if err != nil {
				t.Fatalf("%s: Python printed %q", what, printed[0])
			}
			printed = printed[1:]
			if got := MaxAbsDiff(c.dt, c.y, c.x); got != float64(want) {
				t.Errorf("%s of %d elements: %v, exactly %d", what, len(c.y)/c.dt.Size(), got, want)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(dir, c.Out))
		if err != nil {
			t.Fatal(err)
		}
		op := LookupElementwise(c.Op)
		got := append([]byte(nil), c.y...)
		var x []byte
		if op.Arrays == 1 {
			got = append([]byte(nil), c.x...)
		} else {
			x = c.x
		}
		op.Apply(c.dt, got, c.a, x)
		for i := range len(want) / c.dt.Size() {
			if g, w := intAt(c.dt, got, i), intAt(c.dt, want, i); g != w {
				from := fmt.Sprintf("x=%d", intAt(c.dt, c.x, i))
				if op.Arrays == 2 {
					from = fmt.Sprintf("y=%d %s", intAt(c.dt, c.y, i), from)
				}
				t.Errorf("%s: [%d] = %d, NumPy gives %d from %s", what, i, g, w, from)
				break
			}
		}
	}
}

// intAt is element i of an integer dtype, exactly.
func intAt(dt device.DType, b []byte, i int) int64 {
	switch dt {
	case device.Int32:
		return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case device.Int64:
		return int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return int64(b[i])
}
