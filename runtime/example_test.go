package runtime_test

import (
	"fmt"

	_ "github.com/gluaproject/glua/bindings"
	"github.com/gluaproject/glua/kernels"
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

// Every elementwise kernel of the table in package kernels runs through
// one method; a is ignored by the kernels that take no number.
func ExampleRuntime_Elementwise() {
	rt, err := runtime.New(runtime.Options{Backend: "cpu", HardLimit: "1GiB"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	h, _ := runtime.HostArrayFromFloats([]float64{1, 2, 3}, []int{3}, runtime.Float32)
	x, _ := rt.ToDevice(h)
	y, _ := rt.Full([]int{3}, 2, runtime.Float32)
	if err := rt.Elementwise(kernels.LookupElementwise("mul"), y, 0, x); err != nil { // y = y·x
		fmt.Println(err)
	}
	if err := rt.Elementwise(kernels.LookupElementwise("scale"), y, 0.5, nil); err != nil { // y = 0.5·y
		fmt.Println(err)
	}
	got, _ := y.Float64s()
	fmt.Println(got)
	// Output:
	// [1 2 3]
}

// Several runtimes share one backend and memory pool, each on its own
// goroutine with a quota of its own; the shared pool's limit caps them all.
func ExampleNewShared() {
	shared, err := runtime.NewShared(runtime.Options{Backend: "cpu", CPUMemory: "1GiB", HardLimit: "512MiB"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer shared.Close() // after every runtime on it has closed

	sums := make([]float64, 3)
	done := make(chan error, len(sums))
	work := func(i int) error {
		rt, err := runtime.New(runtime.Options{Shared: shared, HardLimit: "128MiB"})
		if err != nil {
			return err
		}
		defer rt.Close() // frees this runtime's arrays into the shared pool
		x, _ := rt.Full([]int{1000}, float64(i+1), runtime.Float32)
		sums[i], err = rt.Sum(x)
		return err
	}
	for i := range sums {
		go func() { done <- work(i) }()
	}
	for range sums {
		if err := <-done; err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(sums, shared.Stats().LiveBlocks)
	// Output:
	// [1000 2000 3000] 0
}
