package glua_test

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua"
)

// A Go program hands a script an array, lets it work in place, and reads
// the result back as a Go slice.
func Example() {
	rt, err := glua.New(glua.Options{HardLimit: "256MiB"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()

	h, _ := glua.HostArrayFromFloats([]float64{1, 2, 3, 4}, []int{2, 2}, glua.Float32)
	a, err := rt.ToDevice(h)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = rt.DoString(`
		local cuda, kernels = require("cuda"), require("kernels")
		function square(a)
			local c = cuda.zeros(a.shape, a.dtype)
			return kernels.matmul(c, a, a)
		end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := rt.Call("square", a)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := out[0].(*glua.Array)
	values, _ := c.Float64s()
	fmt.Println(c, values)
	// Output:
	// DeviceArray<float32>[2x2] 16 B [7 10 15 22]
}

// New makes a runtime whose HardLimit is its quota: an allocation past it
// is an out-of-memory error that the script can catch, and that the host
// tells apart with errors.Is.
func ExampleNew() {
	rt, err := glua.New(glua.Options{HardLimit: "64MiB"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	err = rt.DoString(`
		local cuda = require("cuda")
		local ok = pcall(cuda.zeros, {8192, 8192}) -- 256 MiB
		print("caught in the script: " .. tostring(not ok))
		local x = cuda.zeros({8192, 8192})`)
	fmt.Println("out of memory:", errors.Is(err, glua.ErrOutOfMemory))
	var oom *glua.OOMError
	if errors.As(err, &oom) {
		fmt.Println("asked for", oom.Requested>>20, "MiB; limit", oom.HardLimit>>20, "MiB")
	}
	// Output:
	// caught in the script: true
	// out of memory: true
	// asked for 256 MiB; limit 64 MiB
}

// An array set as a global is the script's to use in place; it stays
// Go's, so the script dropping it frees nothing.
func ExampleRuntime_SetGlobal() {
	rt, err := glua.New(glua.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	x, _ := rt.Full([]int{3}, 2, glua.Float32)
	if err := rt.SetGlobal("x", x); err != nil {
		fmt.Println(err)
		return
	}
	if err := rt.SetGlobal("factor", 10); err != nil {
		fmt.Println(err)
		return
	}
	if err := rt.DoString(`require("kernels").scale(x, factor); x = nil`); err != nil {
		fmt.Println(err)
		return
	}
	values, err := x.Float64s()
	fmt.Println(values, err)
	// Output:
	// [20 20 20] <nil>
}

// A Go function that scripts call: arguments arrive as Go values (numbers
// as float64, arrays as *glua.Array), and an error returned is a Lua
// error that names the function.
func ExampleRuntime_SetGlobal_function() {
	rt, err := glua.New(glua.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	err = rt.SetGlobal("total", glua.Func(func(args ...any) ([]any, error) {
		x, ok := args[0].(*glua.Array)
		if !ok {
			return nil, fmt.Errorf("argument 1 must be a DeviceArray, got %T", args[0])
		}
		sum, err := rt.Sum(x)
		return []any{sum}, err
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = rt.DoString(`
		print(total(require("cuda").ones({4, 4})))
		print(select(2, pcall(total, "four")))`)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// 16
	// <string>:3: total: argument 1 must be a DeviceArray, got string
}

// Global takes a value the script made; an array is Kept, so it outlives
// the script's reference to it.
func ExampleRuntime_Global() {
	rt, err := glua.New(glua.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	if err := rt.DoString(`result = require("cuda").to_device({1, 2, 3}, "float64")`); err != nil {
		fmt.Println(err)
		return
	}
	v, err := rt.Global("result")
	if err != nil {
		fmt.Println(err)
		return
	}
	a, ok := v.(*glua.Array)
	if !ok {
		fmt.Printf("result is a %T\n", v)
		return
	}
	rt.DoString(`result = nil; collectgarbage()`)
	values, err := a.Float64s()
	fmt.Println(a.DType(), values, err)
	// Output:
	// float64 [1 2 3] <nil>
}

// Call calls a script's function with Go arguments: a []float64 arrives
// as a HostArray, and the results come back as Go values.
func ExampleRuntime_Call() {
	rt, err := glua.New(glua.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	err = rt.DoString(`
		function stats(h, label)
			local x = require("cuda").to_device(h)
			local kernels = require("kernels")
			return label, kernels.sum(x), kernels.norm(x)
		end`)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := rt.Call("stats", []float64{3, 4}, "v")
	fmt.Println(out, err)
	_, err = rt.Call("stats", make(chan int))
	fmt.Println(err)
	// Output:
	// [v 7 5] <nil>
	// glua: Call("stats"): argument 1: a chan int has no Lua value (pass a number, string, bool, *Array, *HostArray, []float64, []float32, Func or lua.LValue)
}
