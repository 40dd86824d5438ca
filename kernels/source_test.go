package kernels

import (
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
