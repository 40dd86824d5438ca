package kernels

import (
	"embed"
	"fmt"
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
	return string(prelude) + "\n#line 1 \"" + file + "\"\n" + string(body), "glua_" + file, nil
}
