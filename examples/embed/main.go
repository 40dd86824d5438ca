// Command embed is a Go program that embeds glua as a host application
// would: it makes a runtime with a memory quota, gives its scripts a Go
// function to call, hands a script an array made in Go, lets the script
// work on it in place and return a new array, and reads that back as a Go
// slice. Past the quota, the script's allocation fails with an error the
// host tells apart, and the runtime carries on.
//
//	go run ./examples/embed
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gluaproject/glua"
)

// script is the Lua side. step scales the host's array in place, so the
// host sees the change, and returns the product x·x in a new array.
const script = `
local cuda, kernels = require("cuda"), require("kernels")

function step(x, factor)
  kernels.scale(x, factor)                -- in place, in the host's memory
  local y = cuda.zeros(x.shape, x.dtype)
  kernels.matmul(y, x, x)                 -- y = x·x
  report("norm of x·x", kernels.norm(y))  -- a Go function
  return y
end

function square_zeros(n)
  return cuda.zeros({n, n})
end
`

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	rt, err := glua.New(glua.Options{HardLimit: "64MiB", Stdout: w})
	if err != nil {
		return err
	}
	defer rt.Close()

	err = rt.SetGlobal("report", glua.Func(func(args ...any) ([]any, error) {
		what, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("argument 1 must be a string, got %T", args[0])
		}
		v, ok := args[1].(float64)
		if !ok {
			return nil, fmt.Errorf("argument 2 must be a number, got %T", args[1])
		}
		fmt.Fprintf(w, "the script reports %s: %.4g\n", what, v)
		return nil, nil
	}))
	if err != nil {
		return err
	}
	if err := rt.DoString(script); err != nil {
		return err
	}

	h, err := glua.HostArrayFromFloats([]float64{1, 2, 3, 4}, []int{2, 2}, glua.Float32)
	if err != nil {
		return err
	}
	x, err := rt.ToDevice(h)
	if err != nil {
		return err
	}
	out, err := rt.Call("step", x, 2)
	if err != nil {
		return err
	}
	y, ok := out[0].(*glua.Array)
	if !ok {
		return fmt.Errorf("step returned a %T, not an array", out[0])
	}
	xs, err := x.Float64s()
	if err != nil {
		return err
	}
	ys, err := y.Float64s()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "x, scaled in place by the script: %v\n", xs)
	fmt.Fprintf(w, "y = x·x, returned by the script: %v %v\n", y.Shape(), ys)

	// 8192² float32 is 256 MiB: four times the quota.
	_, err = rt.Call("square_zeros", 8192)
	var oom *glua.OOMError
	if !errors.Is(err, glua.ErrOutOfMemory) || !errors.As(err, &oom) {
		return fmt.Errorf("an allocation past the quota: %v", err)
	}
	fmt.Fprintf(w, "past the quota: out of memory asking for %d MiB under a hard limit of %d MiB\n", oom.Requested>>20, oom.HardLimit>>20)
	out, err = rt.Call("square_zeros", 1024)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "within it, the runtime carries on: %v\n", out[0])
	return nil
}
