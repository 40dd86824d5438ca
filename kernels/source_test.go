package kernels

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// The GPU is not needed to see that each elementwise module defines what
// GPU.ElementwiseTo launches: glua_<name>_<dtype>(out, y, x, n, a, vec), or
// (out, x, n, a, vec) for one array, pasted by elementwise.cu's macros for every dtype
// GLUA_DTYPES_WITH lists, from a line per table entry (two for an entry
// with its own integer expression), in a module of its own.
func TestElementwiseCUDASourceDefinesEveryTableKernel(t *testing.T) {
	src, _, err := cudaSource("elementwise")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ElementwiseOps() {
		macro := map[int]string{1: "GLUA_ONE_ARRAY", 2: "GLUA_TWO_ARRAYS"}[op.Arrays]
		line := "#line 1 \"kernels." + op.Name + "\"\n"
		if op.IntCUDA != "" {
			line += "GLUA_INT_EXPR(" + op.Name + ", " + op.IntCUDA + ")\n"
		}
		line += macro + "(" + op.Name + ", " + op.CUDA + ")\n"
		own, name, err := cudaSource("elementwise/" + op.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(own, line) || !strings.HasPrefix(own, src) || name != "glua_elementwise_"+op.Name+".cu" {
			t.Errorf("the module %s (%s) is not elementwise.cu and the lines %q", op.Name, name, line)
		}
		if strings.Count(own, "#line 1 \"kernels.") != 1 {
			t.Errorf("the module %s holds other kernels of the table", op.Name)
		}
		if strings.ContainsAny(op.CUDA+op.IntCUDA, "\n\\#") {
			t.Errorf("%s: the CUDA expressions must stay on one macro line: %q, %q", op.Name, op.CUDA, op.IntCUDA)
		}
	}
	for _, def := range []string{
		"#define GLUA_TWO_ARRAYS(OP, ...)",
		"GLUA_DTYPES_WITH(GLUA_TWO_ARRAYS_ENTRY, OP)",
		"#define GLUA_TWO_ARRAYS_ENTRY(OP, NAME, T)",
		`extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* y, const T::S* x, i64 n, T::A a, int vec)`,
		"#define GLUA_ONE_ARRAY(OP, ...)",
		"GLUA_DTYPES_WITH(GLUA_ONE_ARRAY_ENTRY, OP)",
		"#define GLUA_ONE_ARRAY_ENTRY(OP, NAME, T)",
		`extern "C" __global__ void glua_##OP##_##NAME(T::S* out, const T::S* x, i64 n, T::A a, int vec)`,
		"#define GLUA_INT_EXPR(OP, ...)",
		"__device__ inline int glua_##OP##_expr(int y, int x, int a) { return __VA_ARGS__; }",
		"__device__ inline i64 glua_##OP##_expr(i64 y, i64 x, i64 a) { return __VA_ARGS__; }",
		"template <class C> __device__ inline C glua_##OP##_expr(C y, C x, C a) { return __VA_ARGS__; }",
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

// The float32 generator's constants are words in both files, and so are
// its indices into them.
func TestRandNCUDAHasTheGoFloat32Words(t *testing.T) {
	src, err := cudaFiles.ReadFile("rand.cu")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)glua_randn32\[(\d+)\] = \{(.*?)\};`).FindSubmatch(src)
	if table == nil {
		t.Fatal("rand.cu has no glua_randn32 table")
	}
	words := regexp.MustCompile(`0x([0-9a-f]{8})u`).FindAllSubmatch(table[2], -1)
	if n, _ := strconv.Atoi(string(table[1])); n != len(normal32Bits) || len(words) != len(normal32Bits) {
		t.Fatalf("rand.cu's glua_randn32[%s] has %d words, randn.go's normal32Bits %d", table[1], len(words), len(normal32Bits))
	}
	for i, w := range words {
		if v, err := strconv.ParseUint(string(w[1]), 16, 32); err != nil || uint32(v) != normal32Bits[i] {
			t.Errorf("rand.cu: glua_randn32[%d] is 0x%s, randn.go has %#08x", i, w[1], normal32Bits[i])
		}
	}
	index := map[string]int{"GLUA_N32_SIN": n32Sin, "GLUA_N32_COS": n32Cos, "GLUA_N32_SQRT_HALF": n32SqrtHalf,
		"GLUA_N32_LN2_HI": n32Ln2Hi, "GLUA_N32_LN2_LO": n32Ln2Lo, "GLUA_N32_LG1": n32Lg1}
	defines := regexp.MustCompile(`(?m)^#define (GLUA_N32_\w+) (\d+)$`).FindAllStringSubmatch(string(src), -1)
	if len(defines) != len(index) {
		t.Errorf("rand.cu defines %d GLUA_N32_ indices, randn.go %d", len(defines), len(index))
	}
	for _, d := range defines {
		if v, err := strconv.Atoi(d[2]); err != nil || v != index[d[1]] {
			t.Errorf("rand.cu: %s is %s, randn.go has %d", d[1], d[2], index[d[1]])
		}
	}
}

// GPU.ElementwiseTo passes a kernel's number as an int64 for an integer
// dtype and a float64 for a float one, and GPU.Sum and GPU.MaxAbsDiff
// launch integer entry points of their own: the traits and the reduce
// module must agree with that, which the source shows without a GPU.
func TestCUDATraitsAndReductionsMatchWhatTheHostLaunches(t *testing.T) {
	src := DtypesSource()
	trait := map[device.DType]string{device.Float32: "F32", device.Float64: "F64", device.Float16: "F16",
		device.BFloat16: "BF16", device.Int32: "I32", device.Int64: "I64", device.Uint8: "U8"}
	for _, dt := range device.DTypes {
		a := "typedef double A;"
		list := "#define GLUA_FLOAT_DTYPES(X)"
		if !dt.IsFloat() {
			a, list = "typedef i64 A;", "#define GLUA_INT_DTYPES(X)"
		}
		def := regexp.MustCompile(`(?s)struct ` + trait[dt] + ` \{(.*?)\n\};`).FindStringSubmatch(src)
		if def == nil || !strings.Contains(def[1], a) {
			t.Errorf("dtypes.cu: struct %s does not say %q", trait[dt], a)
		}
		line := src[strings.Index(src, list):]
		line = line[:strings.IndexByte(line, '\n')]
		if !strings.Contains(line, "X("+dt.String()+", "+trait[dt]+")") {
			t.Errorf("dtypes.cu: %s does not list %s", list, dt)
		}
	}
	reduce, _, err := cudaSource("reduce")
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{
		"GLUA_DTYPES(GLUA_SUM)",
		"GLUA_FLOAT_DTYPES(GLUA_MAXABSDIFF)",
		"GLUA_INT_DTYPES(GLUA_INT_REDUCE)",
		`extern "C" __global__ void glua_sum_##NAME(const T::S* x, i64 n, int square, int vec, double* partials)`,
		`extern "C" __global__ void glua_isum_##NAME(const T::S* x, i64 n, int vec, u64* partials)`,
		`extern "C" __global__ void glua_maxabsdiff_##NAME(const T::S* x, const T::S* y, i64 n, int vec, u64* partials)`,
		`extern "C" __global__ void glua_finish_isum(const u64* partials, int count, u64* out)`,
		`extern "C" __global__ void glua_finish_umax(const u64* partials, int count, u64* out)`,
	} {
		if !strings.Contains(reduce, def) {
			t.Errorf("the reduce module lacks %q", def)
		}
	}
}
