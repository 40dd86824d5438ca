// Package glua is the one import a Go program needs to embed glua: the
// runtime, glua's Lua modules (cuda, kernels, pool, batch) and both
// backends (cuda where an NVIDIA driver is found, cpu otherwise).
//
//	rt, err := glua.New(glua.Options{HardLimit: "4GiB"})
//	defer rt.Close()
//	err = rt.SetGlobal("x", x)          // a Go array, number, string, function...
//	err = rt.DoString(`require("kernels").scale(x, 2)`)
//	out, err := rt.Call("step", x, 0.5) // a Lua function, with Go arguments and results
//
// The names here are the runtime package's, re-exported: a glua.Runtime is
// a runtime.Runtime, so the batch package and anything else written
// against the runtime package take it as it is. Package runtime has the
// full Go API; this package adds nothing to it but the imports that make
// its modules and backends present.
//
// Arrays that cross keep one owner. An array Go passes to a script
// (SetGlobal, Call's arguments, a Func's results) stays Go's: the script
// dropping it never frees it. An array Go takes from a script (Global,
// Call's results, in a table or not) is Kept: from then on Go owns it, and
// Free, Runtime.Close or Go's garbage collector frees it. The arrays a
// Func receives are the script's, borrowed for the call.
package glua

import (
	_ "github.com/gluaproject/glua/bindings" // the Lua modules and the Go↔Lua value converter
	_ "github.com/gluaproject/glua/cpu"      // the backends runtime.New chooses from
	_ "github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/pool"
	"github.com/gluaproject/glua/runtime"
)

type (
	// Runtime is one glua instance: a configuration, a backend, a memory
	// pool and a Lua state (runtime.Runtime).
	Runtime = runtime.Runtime
	// Options configures a Runtime; a zero field is taken from the
	// configuration (runtime.Options).
	Options = runtime.Options
	// Shared is a backend and memory pool that several runtimes share,
	// each with a quota of its own (runtime.Shared).
	Shared = runtime.Shared
	// Array is an n-dimensional row-major array in device memory: a
	// script's DeviceArray (runtime.Array).
	Array = runtime.Array
	// HostArray is an n-dimensional row-major array in host memory: a
	// script's HostArray (runtime.HostArray).
	HostArray = runtime.HostArray
	// DType is an element type: Float32, Float64, ... (device.DType).
	DType = runtime.DType
	// Func is a Go function that scripts call (runtime.Func).
	Func = runtime.Func
	// ScriptError is a Lua error that ended DoString, DoFile or Call; it
	// unwraps to the Go error behind it (runtime.ScriptError).
	ScriptError = runtime.ScriptError
	// OOMError is the details of a device allocation that did not fit:
	// what was asked for, what is in use and cached, the limits
	// (pool.OOMError). errors.As finds it in a script's error.
	OOMError = pool.OOMError
	// HostOOMError is a host allocation refused for want of memory
	// (runtime.HostOOMError).
	HostOOMError = runtime.HostOOMError
	// MatmulOptions are Runtime.Matmul's optional arguments
	// (runtime.MatmulOptions).
	MatmulOptions = runtime.MatmulOptions
	// NPYOptions say how Runtime.LoadNPY loads a file (runtime.NPYOptions).
	NPYOptions = runtime.NPYOptions
	// Operator is an arithmetic operator of Runtime.Arith: OpAdd, OpSub,
	// OpMul or OpDiv (runtime.Operator).
	Operator = runtime.Operator
	// Operand is one side of Runtime.Arith: an array, or a number
	// (runtime.Operand).
	Operand = runtime.Operand
	// HostOperand is one side of Runtime.HostArith (runtime.HostOperand).
	HostOperand = runtime.HostOperand
)

// The operators of Runtime.Arith and Runtime.HostArith, as Lua spells
// them.
const (
	OpAdd = runtime.OpAdd
	OpSub = runtime.OpSub
	OpMul = runtime.OpMul
	OpDiv = runtime.OpDiv
)

// The dtypes, as scripts name them: "float32", "float64", ...
const (
	Float32  = runtime.Float32
	Float64  = runtime.Float64
	Float16  = runtime.Float16
	BFloat16 = runtime.BFloat16
	Int32    = runtime.Int32
	Int64    = runtime.Int64
	Uint8    = runtime.Uint8
)

// The errors a host tells apart with errors.Is, also across a script's
// failure.
var (
	// ErrOutOfMemory is behind every device or host allocation that did
	// not fit (device.ErrOutOfMemory).
	ErrOutOfMemory = device.ErrOutOfMemory
	// ErrFreed is the use of an array whose memory was released
	// (runtime.ErrFreed).
	ErrFreed = runtime.ErrFreed
	// ErrBadArgument is a call refused for its arguments before anything
	// ran (runtime.ErrBadArgument).
	ErrBadArgument = runtime.ErrBadArgument
	// ErrClosed is any use of a runtime after its Close, and the result
	// of a run that Close stopped (runtime.ErrClosed).
	ErrClosed = runtime.ErrClosed
	// ErrInUse is a DoString, DoFile, Call, SetGlobal or Global made while
	// another goroutine runs the runtime (runtime.ErrInUse).
	ErrInUse = runtime.ErrInUse
	// ErrSandboxedCUDA is a script's kernels.compile refused by
	// Options.Sandbox (runtime.ErrSandboxedCUDA).
	ErrSandboxedCUDA = runtime.ErrSandboxedCUDA
	// ErrSandboxed is a script's file access refused by Options.Sandbox
	// (runtime.ErrSandboxed).
	ErrSandboxed = runtime.ErrSandboxed
)

// New creates a runtime with glua's modules preloaded: it reads the
// configuration, chooses and starts the backend ("auto": the GPU where
// one is usable, else the CPU), and makes the pool, whose HardLimit is
// the runtime's quota (runtime.New). Close it when done: Close frees
// every array it still holds.
func New(opts Options) (*Runtime, error) { return runtime.New(opts) }

// NewShared opens one backend and memory pool for several runtimes, each
// made with Options.Shared and a quota of its own (runtime.NewShared).
func NewShared(opts Options) (*Shared, error) { return runtime.NewShared(opts) }

// HostArrayFromFloats builds a host array of the given shape and dtype
// from values, row-major, converting each to dt; an integer dtype refuses
// a value beyond its range
// (runtime.HostArrayFromFloats).
func HostArrayFromFloats(values []float64, shape []int, dt DType) (*HostArray, error) {
	return runtime.HostArrayFromFloats(values, shape, dt)
}
