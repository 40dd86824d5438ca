package npy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/numpytest"
	"github.com/gluaproject/glua/npy"
)

// numpyCase is an array NumPy writes or reads: its file name, NumPy dtype
// string and shape.
type numpyCase struct {
	Name  string `json:"name"`
	Descr string `json:"descr"`
	Shape []int  `json:"shape"`
}

// numpyCases cover every glua dtype NumPy has, in both byte orders, and
// the shapes that are edge cases: a vector, three dimensions, a 0-d
// scalar, zero elements, and one large enough to span many pages.
func numpyCases() []numpyCase {
	var cases []numpyCase
	for _, d := range []string{"<f4", "<f8", "<f2", "<i4", "<i8", "|u1", ">f4", ">f8", ">f2", ">i4", ">i8"} {
		name := strings.NewReplacer("<", "le_", ">", "be_", "|", "").Replace(d)
		cases = append(cases, numpyCase{name, d, []int{3, 4}})
	}
	return append(cases,
		numpyCase{"vector", "<f4", []int{7}},
		numpyCase{"cube", "<i8", []int{2, 3, 4}},
		numpyCase{"scalar", "<f8", []int{}},
		numpyCase{"empty", "<f4", []int{0, 3}},
		numpyCase{"large", "<f4", []int{1000, 257}},
	)
}

// writeWithNumPy saves each case with fresh random values, never zero,
// as NAME.npy, and its little-endian C-order bytes as NAME.raw.
const writeWithNumPy = `
import json, sys
import numpy as np
out, seed, cases = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
rng = np.random.default_rng(seed)
def values(dt, shape):
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "f":
        v = rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n) * 10.0 ** rng.integers(-3, 4, n)
    elif dt.kind == "u":
        v = rng.integers(1, np.iinfo(dt).max, n, endpoint=True)
    else:
        v = rng.integers(1, np.iinfo(dt).max, n) * rng.choice([-1, 1], n)
    return v.astype(dt).reshape(shape)
for c in cases:
    a = values(np.dtype(c["descr"]), tuple(c["shape"]))
    np.save(out + "/" + c["name"] + ".npy", a)
    with open(out + "/" + c["name"] + ".raw", "wb") as f:
        f.write(a.astype(a.dtype.newbyteorder("<")).tobytes())
np.save(out + "/fortran.npy", np.asfortranarray(values(np.dtype("<f4"), (3, 4))))
np.save(out + "/object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
np.save(out + "/uint32.npy", values(np.dtype("<u4"), (2,)))
np.save(out + "/bool.npy", np.array([True, False]))
`

func TestGluaReadsWhatNumPyWrites(t *testing.T) {
	dir := t.TempDir()
	seed := time.Now().UnixNano() & (1<<62 - 1)
	cases := numpyCases()
	spec, _ := json.Marshal(cases)
	numpytest.Run(t, writeWithNumPy, dir, fmt.Sprint(seed), string(spec))
	t.Logf("NumPy's random seed: %d", seed)
	for _, c := range cases {
		path := filepath.Join(dir, c.Name+".npy")
		raw, err := os.ReadFile(filepath.Join(dir, c.Name+".raw"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := npy.Open(path)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		got := make([]byte, f.NBytes())
		if err := f.ReadData(got); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if desc, _ := npy.Descr(f.DType); desc[1:] != c.Descr[1:] || !slices.Equal(f.Shape, c.Shape) || f.BigEndian != (c.Descr[0] == '>') {
			t.Errorf("%s: read %s %v big-endian %v, NumPy wrote %s %v", c.Name, f.DType, f.Shape, f.BigEndian, c.Descr, c.Shape)
		}
		if !bytes.Equal(got, raw) {
			t.Errorf("%s: the values read differ from NumPy's", c.Name)
		}
		if npy.CanMap && !f.BigEndian {
			m, err := f.Map()
			if err != nil || !bytes.Equal(m.Bytes(), raw) {
				t.Errorf("%s: mapped values differ from NumPy's (%v)", c.Name, err)
			}
		}
		f.Close()
	}
	for name, want := range map[string]string{
		"fortran": "fortran_order is True: the 3x4 array is stored column-major",
		"object":  "object arrays (dtype '|O') hold Python objects",
		"uint32":  "unsupported dtype '<u4' (uint32)",
		"bool":    "unsupported dtype '|b1' (bool)",
	} {
		path := filepath.Join(dir, name+".npy")
		if _, err := npy.Open(path); err == nil || !strings.HasPrefix(err.Error(), path+": "+want) {
			t.Errorf("%s: %v\nwant %s: %s", name, err, path, want)
		}
	}
}

// readWithNumPy loads each case with np.load, read and mapped, and checks
// its dtype, shape and bytes against NAME.raw, and that glua's file is
// byte for byte what np.save writes for the same array.
const readWithNumPy = `
import io, json, sys
import numpy as np
out, cases = sys.argv[1], json.loads(sys.argv[2])
for c in cases:
    path = out + "/" + c["name"] + ".npy"
    with open(out + "/" + c["name"] + ".raw", "rb") as f:
        raw = f.read()
    a, m = np.load(path), np.load(path, mmap_mode="r")
    for x in (a, m):
        assert x.dtype.str == c["descr"], (c["name"], x.dtype.str)
        assert x.shape == tuple(c["shape"]), (c["name"], x.shape)
        assert x.flags.c_contiguous, c["name"]
        assert x.tobytes() == raw, (c["name"], "values differ")
    buf = io.BytesIO()
    np.save(buf, a)
    with open(path, "rb") as f:
        assert f.read() == buf.getvalue(), (c["name"], "file differs from np.save's")
    print("ok", c["name"])
`

func TestNumPyReadsWhatGluaWrites(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var cases []numpyCase
	for _, c := range numpyCases() {
		if c.Descr[0] == '>' || len(c.Shape) == 0 {
			continue // glua writes little-endian arrays of at least one dimension
		}
		cases = append(cases, c)
	}
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.Int32, device.Int64, device.Uint8} {
		descr, _ := npy.Descr(dt)
		cases = append(cases, numpyCase{"glua_" + dt.String(), descr, []int{5, 6}})
	}
	for _, c := range cases {
		dt := dtypeOf(t, c.Descr)
		h := npy.Header{DType: dt, Shape: c.Shape}
		data := make([]byte, h.NBytes())
		for i := range h.Size() {
			device.Set(dt, data, i, nonZero(rng, dt))
		}
		if err := npy.WriteFile(filepath.Join(dir, c.Name+".npy"), h, data); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, c.Name+".raw"), data, 0o644)
	}
	spec, _ := json.Marshal(cases)
	out := numpytest.Run(t, readWithNumPy, dir, string(spec))
	if n := strings.Count(out, "ok "); n != len(cases) {
		t.Errorf("NumPy checked %d of %d files:\n%s", n, len(cases), out)
	}
}

// dtypeOf is the glua dtype of a little-endian NumPy dtype string.
func dtypeOf(t *testing.T, descr string) device.DType {
	for _, dt := range device.DTypes {
		if d, err := npy.Descr(dt); err == nil && d == descr {
			return dt
		}
	}
	t.Fatalf("no glua dtype for %s", descr)
	return device.Invalid
}

// nonZero is a random value of dt's range, never zero, with both signs
// where dt has them.
func nonZero(rng *rand.Rand, dt device.DType) float64 {
	switch dt {
	case device.Uint8:
		return float64(1 + rng.IntN(255))
	case device.Int32:
		return float64(1+rng.Int32N(1<<31-1)) * sign(rng)
	case device.Int64:
		return float64(1+rng.Int64N(1<<53)) * sign(rng)
	}
	return (0.5 + 1.5*rng.Float64()) * sign(rng) * float64([]float64{1e-3, 1e-1, 1, 10, 1e3}[rng.IntN(5)])
}

func sign(rng *rand.Rand) float64 {
	if rng.IntN(2) == 0 {
		return -1
	}
	return 1
}

// A file made by Create and filled through a writable mapping is one NumPy
// reads, with every value written; OpenWritable on it maps the same data
// again, and what is written then reaches the file too.
func TestCreatedFileFilledThroughItsMappingIsReadByNumPy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "made.npy")
	h := npy.Header{DType: device.Float64, Shape: []int{300, 7}}
	if err := npy.Create(path, h); err != nil {
		t.Fatal(err)
	}
	values := make([]float64, 300*7)
	for i := range values {
		values[i] = rand.Float64() + 1
	}
	for pass := range 2 { // Create's file, then OpenWritable's second mapping
		f, err := npy.OpenWritable(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := f.Map()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !m.Writable() {
			t.Fatal("the mapping is read-only")
		}
		data := m.Bytes()
		for i, v := range values {
			if pass == 1 {
				v = -v
			}
			bits := math.Float64bits(v)
			for b := range 8 {
				data[8*i+b] = byte(bits >> (8 * b))
			}
		}
		if err := m.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		got := numpytest.Run(t, `
import sys
import numpy as np
a = np.load(sys.argv[1])
print(a.dtype.str, "x".join(map(str, a.shape)), repr(float(a.sum())))
`, path)
		sum := 0.0
		for _, v := range values {
			sum += v
		}
		if pass == 1 {
			sum = -sum
		}
		var dtype, shape string
		var numpySum float64
		if _, err := fmt.Sscanf(got, "%s %s %g", &dtype, &shape, &numpySum); err != nil {
			t.Fatalf("NumPy printed %q: %v", got, err)
		}
		if dtype != "<f8" || shape != "300x7" || math.Abs(numpySum-sum) > 1e-9*math.Abs(sum) {
			t.Fatalf("pass %d: NumPy read %q, want <f8 300x7 with sum %v", pass, got, sum)
		}
	}
}
