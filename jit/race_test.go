//go:build race

package jit

// raceEnabled says the tests run under the race detector, where each
// goroutine and memory access costs many times more, and every thread of
// a block that calls kernels.syncthreads is a goroutine. The map_reduce
// tests then take a few blocks, run in parallel, instead of thousands:
// the same paths and assertions, at sizes the race detector gets through
// in seconds. Arrays that pass the grid (fewBlocks: over 16384 elements,
// hundreds of thousands of goroutines a run) are checked by the run
// without it.
const raceEnabled = true
