package runtime_test

import (
	"fmt"

	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/runtime"
)

// A Go program embeds glua: create a runtime, run Lua, and use arrays from
// Go as well.
func Example() {
	rt, err := runtime.New(runtime.Options{Backend: "cpu", HardLimit: "1GiB"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	err = rt.DoString(`
		local cuda, kernels = require("cuda"), require("kernels")
		local A = cuda.to_device({{1, 2}, {3, 4}})
		local C = cuda.zeros({2, 2})
		kernels.matmul(C, A, A)
		print(C:to_table()[2][2])`)
	if err != nil {
		fmt.Println(err)
	}

	x, _ := rt.Full([]int{3}, 2, runtime.Float32)
	y, _ := rt.Full([]int{3}, 1, runtime.Float32)
	rt.Axpy(y, 10, x) // y = 10·x + y
	sum, _ := rt.Sum(y)
	fmt.Println(sum)
	// Output:
	// 22
	// 63
}
