package kernels

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// The GPU is not needed to see that the elementwise module defines what
// GPU.ElementwiseTo launches: glua_<name>_<dtype>(out, y, x, n, a, vec), or
// (out, x, n, a, vec) for one array, pasted by elementwise.cu's macros for every dtype
// GLUA_DTYPES_WITH lists, from a line per table entry.
func TestElementwiseCUDASourceDefinesEveryTableKernel(t *testing.T) {
	src, _, err := cudaSource("elementwise")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ElementwiseOps() {
		macro := map[int]string{1: "GLUA_ONE_ARRAY", 2: "GLUA_TWO_ARRAYS"}[op.Arrays]
		line := "#line 1 \"kernels." + op.Name + "\"\n" + macro + "(" + op.Name + ", " + op.CUDA + ")\n"
		if !strings.Contains(src, line) {
			t.Errorf("the source has no line %q", line)
		}
		if strings.ContainsAny(op.CUDA, "\n\\#") {
			t.Errorf("%s: the CUDA expression must stay on one macro line: %q", op.Name, op.CUDA)
		}
	}
	for _, def := range []string{
		"#define GLUA_TWO_ARRAYS(OP, ...)",
		"GLUA_DTYPES_WITH(GLUA_TWO_ARRAYS_ENTRY, OP)",
		"#define GLUA_TWO_ARRAYS_ENTRY(OP, NAME, T)",
		`extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* y, const T::S* x, i64 n, double a, int vec)`,
		"#define GLUA_ONE_ARRAY(OP, ...)",
		"GLUA_DTYPES_WITH(GLUA_ONE_ARRAY_ENTRY, OP)",
		"#define GLUA_ONE_ARRAY_ENTRY(OP, NAME, T)",
		`extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* x, i64 n, double a, int vec)`,
		"return T::store(__VA_ARGS__);",
		"#define GLUA_DTYPES_WITH(X, A)",
	} {
		if !strings.Contains(src, def) {
			t.Errorf("the source lacks %q", def)
		}
	}
	for _, dt := range device.DTypes {
		if !strings.Contains(src, "X(A, "+dt.String()+", ") {
			t.Errorf("GLUA_DTYPES_WITH does not list %s", dt)
		}
	}
}

// RandN's bits on the GPU equal the Go reference's only if rand.cu holds
// the very constants randn.go does; no GPU is needed to compare them.
func TestRandNCUDAHasTheGoConstants(t *testing.T) {
	src, err := cudaFiles.ReadFile("rand.cu")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"GLUA_AS241_SPLIT1": as241Split1, "GLUA_AS241_CONST1": as241Const1,
		"GLUA_AS241_SPLIT2": as241Split2, "GLUA_AS241_CONST2": as241Const2,
		"GLUA_SQRT_HALF": sqrtHalf, "GLUA_LN2_HI": ln2Hi, "GLUA_LN2_LO": ln2Lo,
		"GLUA_LOG_L1": logL1, "GLUA_LOG_L2": logL2, "GLUA_LOG_L3": logL3, "GLUA_LOG_L4": logL4,
		"GLUA_LOG_L5": logL5, "GLUA_LOG_L6": logL6, "GLUA_LOG_L7": logL7,
	}
	defines := regexp.MustCompile(`(?m)^#define (GLUA_\w+) (\S+)$`).FindAllStringSubmatch(string(src), -1)
	seen := 0
	for _, d := range defines {
		w, ok := want[d[1]]
		if !ok {
			continue
		}
		seen++
		if v, err := strconv.ParseFloat(d[2], 64); err != nil || v != w {
			t.Errorf("rand.cu: %s is %s, randn.go has %v", d[1], d[2], w)
		}
	}
	if seen != len(want) {
		t.Errorf("rand.cu defines %d of the %d constants", seen, len(want))
	}
	table := regexp.MustCompile(`(?s)glua_as241\[6\]\[8\] = \{(.*?)\};`).FindSubmatch(src)
	if table == nil {
		t.Fatal("rand.cu has no glua_as241[6][8] table")
	}
	literals := regexp.MustCompile(`[0-9][0-9.]*(?:e[-+]?[0-9]+)?`).FindAll(table[1], -1)
	var flat []float64
	for _, row := range as241 {
		flat = append(flat, row[:]...)
	}
	if len(literals) != len(flat) {
		t.Fatalf("rand.cu's table has %d numbers, randn.go's %d", len(literals), len(flat))
	}
	for i, lit := range literals {
		if v, err := strconv.ParseFloat(string(lit), 64); err != nil || v != flat[i] {
			t.Errorf("rand.cu: glua_as241[%d][%d] is %s, randn.go has %v", i/8, i%8, lit, flat[i])
		}
	}
}
