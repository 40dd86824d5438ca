// Package jit is glua's kernel language: a typed subset of Lua that
// kernels.jit translates to CUDA C, and a Go evaluator of the same typed
// form that the CPU backend runs instead.
//
// Parse checks a function's syntax tree (as internal/luac recorded it) for
// what a kernel may contain and resolves its names; Check types the
// result for one call signature (each argument's dtype and rank, or
// whether a number is an integer) as Numba types a @cuda.jit function;
// CUDA emits the kernel's C source and Run executes the typed program over
// a grid of blocks of threads on host memory.
//
// The package owns translation and evaluation only: it allocates no device
// memory, launches nothing and knows nothing of Lua states; the runtime
// decides when to translate, compile and launch.
//
// Types: integers compute in int64, wrapping on overflow, wherever their
// value goes; floats in float32 or float64. A literal without a point or
// an exponent is an integer. A local's type is the join of every value
// assigned to it (Check types the function again with a local widened
// until none widens); a float literal takes the float type of the operand beside
// it, else of where its value goes (an element's, a float local's), else
// the kernel's default float (float32 when every float array is 32 bits
// or narrower, else float64); float32 work stays float32 unless a float64
// operand appears; `/` and `^` are float operations; integers and float32
// give float32, but compare exactly (in float64). Loads from float16 and
// bfloat16 arrays compute in float32, from integer arrays in int64. Stores
// convert to the array's dtype once: floats into integer arrays truncate
// and saturate as device.Set does, integers wrap.
//
// A kernel may read locals of its script through an Env: a number is
// compiled in as a constant (CaptureKey makes the values part of the
// variant's key), a function in the language becomes a device function,
// a Func of the program typed per signature of its arguments.
//
// Atomics (kernels.atomic_*) are the one operation with a side effect:
// each is a statement of the typed form (Atomic), its old value kept in
// a local, so that every expression stays free of side effects. Warp
// primitives (kernels.shfl_down, shfl_xor, syncwarp) make the evaluator
// run a block's threads as goroutines that meet warp by warp (warp.go),
// as a GPU warp runs its lanes in step.
//
// An operation that can fail while the kernel runs (an integer % whose
// divisor may be 0) is a trap of the Program: the evaluator returns its
// error, and the CUDA C records its number in an error record the runtime
// reads back after the launch, as it reads an index out of bounds.
package jit
