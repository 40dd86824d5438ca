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

// cudaSource returns the full source of a module and the file name NVRTC's
// messages will use.
func cudaSource(module string) (source, name string, err error) {
	file, ok := cudaModules[module]
	if !ok {
		return "", "", fmt.Errorf("kernels: no CUDA module %q", module)
	}
	prelude, err := cudaFiles.ReadFile("dtypes.cu")
	if err != nil {
		return "", "", err
	}
	body, err := cudaFiles.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	source = string(prelude) + "\n#line 1 \"" + file + "\"\n" + string(body)
	if module == "elementwise" {
		source += elementwiseCUDA()
	}
	return source, "glua_" + file, nil
}

// elementwiseCUDA is the table's kernels as elementwise.cu's macros. Each
// gets a #line naming it, so that NVRTC's message about a mistake in an
// entry's expression names the entry.
func elementwiseCUDA() string {
	var b strings.Builder
	for _, op := range elementwiseOps {
		macro := "GLUA_TWO_ARRAYS"
		if op.Arrays == 1 {
			macro = "GLUA_ONE_ARRAY"
		}
		fmt.Fprintf(&b, "\n#line 1 \"kernels.%s\"\n%s(%s, %s)\n", op.Name, macro, op.Name, op.CUDA)
	}
	return b.String()
}
