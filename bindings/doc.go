// Package bindings is glua's Lua surface: the modules cuda, kernels, pool,
// batch and dist. Each function checks all of its arguments, calls the runtime, and
// converts the result; decisions (limits, retries, which kernel runs)
// belong to the runtime.
//
// Importing the package registers the modules with the runtime, so every
// Runtime created afterwards preloads them, and the converter between Go
// and Lua values that Runtime.SetGlobal, Global and Call use (values.go):
//
//	import _ "github.com/gluaproject/glua/bindings"
//
// The root package github.com/gluaproject/glua imports it for embedders.
package bindings

import "github.com/gluaproject/glua/runtime"

func init() {
	runtime.RegisterModule(runtime.Module{Name: "cuda", Open: openCuda})
	runtime.RegisterModule(runtime.Module{Name: "kernels", Open: openKernels})
	runtime.RegisterModule(runtime.Module{Name: "pool", Open: openPool})
	runtime.RegisterModule(runtime.Module{Name: "batch", Open: openBatch})
	runtime.RegisterModule(runtime.Module{Name: "dist", Open: openDist})
	runtime.RegisterConverter(converter{})
}
