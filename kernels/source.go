package kernels

import (
	"embed"
	"fmt"
	"strings"
)

// The CUDA C of the built-in kernels. Each module is compiled by NVRTC on
// first use as dtypes.cu (types, conversions, exact arithmetic) followed by
// the module's own file, so that using one kernel never pays for compiling
// the others.
//
//go:embed *.cu
var cudaFiles embed.FS

// cudaModules maps a module name to its file.
var cudaModules = map[string]string{
	"elementwise": "elementwise.cu",
	"convert":     "convert.cu",
	"reduce":      "reduce.cu",
	"rand":        "rand.cu",
}

// cudaOptions are NVRTC options for every built-in module. --fmad=false
// keeps the compiler from contracting a product and a sum into an fma,
// which would round once where the Go reference rounds twice (the sources
// use mul.rn/add.rn anyway; this guards any plain arithmetic).
var cudaOptions = []string{"--fmad=false"}

// DtypesSource is dtypes.cu: the typedefs (u8, u16, u32, i64, u64), the
// 2-byte float conversions (f32_to_f16, f16_to_f32, f32_to_bf16,
// bf16_to_f32), the saturating conversions of a float to an integer
// (sat_i32, sat_i64, sat_u8), the exactly rounded float arithmetic, the
// wrapping integer arithmetic (add_rn, sub_rn, mul_rn on int and i64,
// floor_div) and the per-dtype traits. It needs no
// header, so other generators of CUDA C (kernels.jit's) start with it too,
// rather than keep a copy.
func DtypesSource() string {
	b, err := cudaFiles.ReadFile("dtypes.cu")
	if err != nil {
		panic("kernels: dtypes.cu is not embedded: " + err.Error())
	}
	return unitsDefine + string(b)
}

// cudaSource returns the full source of a module and the file name NVRTC's
// messages will use.
//
// Each kernel of the elementwise table is a module of its own,
// "elementwise/<name>": elementwise.cu followed by the entry's lines, its
// entry points for every dtype. Their loops are unrolled per unit and per
// lane in 32- and 64-bit forms, so that one module of the whole table
// took NVRTC several times as long as the one kernel a script uses.
func cudaSource(module string) (source, name string, err error) {
	var op *ElementwiseOp
	if stem, ok := strings.CutPrefix(module, "elementwise/"); ok {
		for _, o := range elementwiseOps {
			if o.Name == stem {
				op = o
			}
		}
		if op == nil {
			return "", "", fmt.Errorf("kernels: no CUDA module %q", module)
		}
		module = "elementwise"
	}
	file, ok := cudaModules[module]
	if !ok {
		return "", "", fmt.Errorf("kernels: no CUDA module %q", module)
	}
	body, err := cudaFiles.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	source = DtypesSource() + "\n#line 1 \"" + file + "\"\n" + string(body)
	if op != nil {
		return source + elementwiseCUDA(op), "glua_elementwise_" + op.Name + ".cu", nil
	}
	return source, "glua_" + file, nil
}

// elementwiseCUDA is an entry of the table as elementwise.cu's macros,
// after a #line naming it, so that NVRTC's message about a mistake in the
// entry's expression names the entry.
func elementwiseCUDA(op *ElementwiseOp) string {
	var b strings.Builder
	macro := "GLUA_TWO_ARRAYS"
	if op.Arrays == 1 {
		macro = "GLUA_ONE_ARRAY"
	}
	fmt.Fprintf(&b, "\n#line 1 \"kernels.%s\"\n", op.Name)
	if op.IntCUDA != "" {
		fmt.Fprintf(&b, "GLUA_INT_EXPR(%s, %s)\n", op.Name, op.IntCUDA)
	}
	fmt.Fprintf(&b, "%s(%s, %s)\n", macro, op.Name, op.CUDA)
	return b.String()
}
