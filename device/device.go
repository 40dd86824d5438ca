package device

import (
	"errors"
	"fmt"
)

// Ptr is an address in a backend's memory: a CUdeviceptr on the GPU, an
// offset-tagged address into the host arena on the CPU backend. Pointer
// arithmetic on it is byte arithmetic, as in CUDA.
type Ptr uint64

// Stream is a backend's queue of work. 0 is the default stream.
type Stream uintptr

// Event marks a point in a stream.
type Event uintptr

// Graph is a backend's recorded work, ready to be replayed (a CUDA graph).
type Graph uintptr

// CaptureError is work refused while a graph was being captured: work that
// waits for the device or moves data to or from the host, which a graph,
// recorded now and run later, cannot hold.
type CaptureError struct {
	Op string // what was refused: "a copy to the host", "cuStreamSynchronize"
}

func (e *CaptureError) Error() string {
	return e.Op + " cannot be captured in a graph: a graph records work to run it later, " +
		"so nothing in it may wait for the device or move data to or from the host; " +
		"do that before the capture or after g:launch()"
}

// Info describes a device as `cuda.device()` shows it.
type Info struct {
	Name              string
	Index             int
	TotalMemory       uint64
	FreeMemory        uint64
	ComputeCapability [2]int // major, minor; {0, 0} on the CPU backend
	Multiprocessors   int    // SMs on the GPU, cores on the CPU backend
}

// ErrOutOfMemory is wrapped by every error a backend returns when the device
// itself has no room; the pool matches it with errors.Is to decide whether
// freeing cached memory can help.
var ErrOutOfMemory = errors.New("out of device memory")

// Access is device memory a piece of work reads, or writes: What names
// it in messages (a kernel's "output").
type Access struct {
	What  string
	P     Ptr
	N     uint64
	Write bool
}

// Gemm is one matrix product C = alpha·op(A)·op(B) + beta·C on row-major
// arrays, or a batch of them: C[i] = alpha·op(A[i])·op(B[i]) + beta·C[i]
// for i below Batch, each operand's i-th matrix Stride elements after its
// (i-1)-th. A, B and C have the same dtype; the 2-byte float types
// accumulate in float32.
type Gemm struct {
	DType          DType
	TransA, TransB bool
	// M×N is the shape of C; K the inner dimension of op(A)·op(B).
	M, N, K int
	Alpha   float64
	Beta    float64
	A, B, C Ptr
	// Row strides in elements (the number of columns of the stored matrix).
	LDA, LDB, LDC int
	// TF32 lets float32 products use tensor cores at tf32 precision.
	TF32   bool
	Stream Stream
	// Batch is how many products the call runs; 0 is one, as 1 is.
	Batch int
	// StrideA, StrideB and StrideC are the elements from one matrix of
	// the batch to the next: 0 for an operand every product shares.
	StrideA, StrideB, StrideC int
}

// CheckBatch refuses a batch no backend runs: a negative count or stride,
// or products whose C matrices overlap, which would write one another's
// elements in an order neither backend defines.
func (g Gemm) CheckBatch() error {
	if g.Batch < 0 || g.StrideA < 0 || g.StrideB < 0 || g.StrideC < 0 {
		return fmt.Errorf("batch and strides must not be negative (batch %d, strides %d, %d and %d)", g.Batch, g.StrideA, g.StrideB, g.StrideC)
	}
	if g.Batch > 1 && g.M > 0 && g.N > 0 && g.StrideC < (g.M-1)*g.LDC+g.N {
		return fmt.Errorf("the batch's C matrices overlap: stride %d, each %dx%d with LDC=%d", g.StrideC, g.M, g.N, g.LDC)
	}
	return nil
}

// The shared libraries the NVIDIA backend loads, each list tried in order:
// the defaults of config.toml's [cuda] lib* keys and of cuda.Config. Use
// the functions, which return fresh slices a caller may change.
func DefaultLibCUDA() []string  { return []string{"libcuda.so.1", "libcuda.so"} }
func DefaultLibNVRTC() []string { return []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"} }
func DefaultLibCUBLAS() []string {
	return []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}
}
func DefaultLibNCCL() []string { return []string{"libnccl.so.2", "libnccl.so"} }
