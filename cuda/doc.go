// Package cuda is glua's NVIDIA backend: the CUDA driver API, NVRTC and
// cuBLAS, loaded at run time with purego so that glua builds with
// CGO_ENABLED=0 and runs on machines with or without a GPU.
//
// It owns the mechanism only: contexts, raw allocations, copies, streams
// and events, cuBLAS matrix products, NVRTC compilation with a disk cache,
// and kernel launches. Pooling belongs to package pool, the built-in
// kernels to package kernels, Lua to package bindings. It imports only
// package device, the standard library and purego.
//
// One Backend drives one device through its primary context, the context
// the CUDA runtime API (and so cuBLAS and other CUDA libraries) uses too.
// Every method makes that context current on its own OS thread, so a
// Backend can be used from any goroutine, and by several runtimes at once
// (runtime.Shared): no lock is held across a launch, a copy or a matrix
// product except the cuBLAS handle's own, and there is one handle per
// stream. Nothing here calls the driver from a finalizer.
//
// Back-to-back kernel launches are handed to a worker thread that calls
// cuLaunchKernel while the caller goes on (launchqueue.go), or gives the
// driver the launches waiting as one graph where they pile up
// (rungraph.go); every other driver call waits for that queue to empty
// first, so the driver sees each goroutine's calls in their order. A launch the driver refuses after it
// was queued is reported by the next call, as a kernel's fault is.
//
// Errors carry the library's own names (CUDA_ERROR_OUT_OF_MEMORY,
// CUBLAS_STATUS_INVALID_VALUE, NVRTC's log). An out-of-memory error wraps
// device.ErrOutOfMemory. A sticky fault (an illegal address, a trap) wraps
// ErrContextLost: the driver refuses all further work in the process, and
// so does the Backend, with the first such error.
package cuda
