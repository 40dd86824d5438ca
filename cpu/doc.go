// Package cpu is glua's host backend: the runtime's Backend contract served
// from ordinary Go memory, so that everything above it (the pool, its limits
// and OOM ladder, the Lua modules, the conformance scripts) runs and is tested
// on a machine without a GPU.
//
// It owns a simulated device: a fixed Capacity that allocations count
// against, a fake address space of 256-byte aligned pointers that views can
// point into the middle of, synchronous streams and events, and matrix
// products through gonum's BLAS. It does not pool, cache or limit memory
// beyond Capacity (that is the pool's job), and it runs no elementwise
// kernels itself: the runtime runs the kernels package's Go implementations
// on the host views that Bytes returns.
//
// Every call completes before it returns, so a stream is only a name and an
// event is done as soon as it is recorded; Elapsed measures host time. The
// exception is a stream recording a graph (graph.go): the work queued on
// it, the runtime's kernels included (through Run), is kept to run at each
// launch of the graph. Launch limits are those of the GPU the backend
// stands in for (limits.go), read at the first launch that needs them.
package cpu
