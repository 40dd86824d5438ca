package cuda

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// blasWorkspaceBytes is the cuBLAS workspace given to each handle: NVIDIA
// recommends 32 MiB on Hopper so that every GEMM kernel cuBLAS picks can
// run without allocating; smaller cards are served by the same size.
// batch.Matmul leaves this much room for it under a hard limit
// (workspaceRoom there): change both together.
const blasWorkspaceBytes = 32 << 20

// minBlasWorkspaceBytes is the smallest workspace tried before none.
const minBlasWorkspaceBytes = 512 << 10

// blasGemm is one cublasGemmEx call in cuBLAS's column-major terms.
type blasGemm struct {
	transA, transB int // CUBLAS_OP_N or CUBLAS_OP_T
	m, n, k        int
	a              device.Ptr
	lda            int
	b              device.Ptr
	ldb            int
	c              device.Ptr
	ldc            int
	dataType       int // cudaDataType of A, B and C
	computeType    int // cublasComputeType_t
	// batch > 1 is a cublasGemmStridedBatchedEx call, with each operand's
	// stride in elements (0: shared by every product).
	batch                     int
	strideA, strideB, strideC int
}

// columnMajorGemm maps a row-major product onto cuBLAS without copies. A
// row-major matrix with row stride ld is, read column-major, its own
// transpose with leading dimension ld. So row-major C = op(A)·op(B) is
// column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: pass B as cuBLAS's first operand and A
// as its second, swap M and N, keep each operand's transpose flag, and use
// each stored row length as the leading dimension.
func columnMajorGemm(g device.Gemm) (blasGemm, error) {
	var c blasGemm
	switch g.DType {
	case device.Float32:
		c.dataType, c.computeType = cudaR32F, cublasCompute32F
		if g.TF32 {
			c.computeType = cublasCompute32FFastTF32
		}
	case device.Float64:
		c.dataType, c.computeType = cudaR64F, cublasCompute64F
	case device.Float16:
		c.dataType, c.computeType = cudaR16F, cublasCompute32F
	case device.BFloat16:
		c.dataType, c.computeType = cudaR16BF, cublasCompute32F
	default:
		return c, fmt.Errorf("cuda: Gemm: dtype %s is not supported (float32, float64, float16 and bfloat16 are)", g.DType)
	}
	if g.M < 0 || g.N < 0 || g.K < 0 || g.M > math.MaxInt32 || g.N > math.MaxInt32 || g.K > math.MaxInt32 {
		return c, fmt.Errorf("cuda: Gemm: dimensions M=%d N=%d K=%d must be between 0 and %d", g.M, g.N, g.K, math.MaxInt32)
	}
	// Stored shapes: A is M×K (K×M when transposed), B is K×N (N×K).
	rowA, rowB := g.K, g.N
	if g.TransA {
		rowA = g.M
	}
	if g.TransB {
		rowB = g.K
	}
	for _, ld := range []struct {
		name      string
		got, need int
	}{{"LDA", g.LDA, rowA}, {"LDB", g.LDB, rowB}, {"LDC", g.LDC, g.N}} {
		if ld.got < ld.need || ld.got > math.MaxInt32 {
			return c, fmt.Errorf("cuda: Gemm: %s=%d is shorter than the stored row length %d", ld.name, ld.got, ld.need)
		}
	}
	if err := g.CheckBatch(); err != nil {
		return c, fmt.Errorf("cuda: Gemm: %w", err)
	}
	if g.Batch > math.MaxInt32 {
		return c, fmt.Errorf("cuda: Gemm: a batch of %d products is more than cuBLAS's %d", g.Batch, math.MaxInt32)
	}
	if g.M > 0 && g.N > 0 {
		if g.C == 0 || (g.K > 0 && (g.A == 0 || g.B == 0)) {
			return c, fmt.Errorf("cuda: Gemm: null matrix pointer (A=%#x B=%#x C=%#x)", g.A, g.B, g.C)
		}
	}
	op := func(t bool) int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	c.transA, c.transB = op(g.TransB), op(g.TransA)
	c.m, c.n, c.k = g.N, g.M, g.K
	c.a, c.lda = g.B, max(g.LDB, 1)
	c.b, c.ldb = g.A, max(g.LDA, 1)
	c.c, c.ldc = g.C, max(g.LDC, 1)
	// Swapped as the operands are.
	c.batch, c.strideA, c.strideB, c.strideC = g.Batch, g.StrideB, g.StrideA, g.StrideC
	return c, nil
}

// blasHandle is one cuBLAS handle bound to one stream, with its workspace.
// A handle must not be used by two threads at once, hence its mutex, which
// also guards h against destroyHandle. The lock is per stream, not global:
// runtimes sharing a backend each run on their own stream, so their
// matrix products never wait on each other's lock.
type blasHandle struct {
	mu            sync.Mutex
	h             uintptr // 0 once destroyed
	workspace     device.Ptr
	workspaceSize uint64
	// release returns a workspace that came from SetWorkspaceAllocator's
	// allocator; nil when the backend allocated it itself.
	release func()
}

// WorkspaceAllocator provides cuBLAS workspaces for stream s, so that the
// caller's memory pool can account for them; release is called when the
// handle that uses the workspace is destroyed (DestroyStream, Close), which
// may be long after the call that created it and on another goroutine. It
// must be safe for concurrent use, and must not call back into the
// Backend's cuBLAS methods. It is an alias, so that a caller's interface can
// name SetWorkspaceAllocator without importing this package.
type WorkspaceAllocator = func(nbytes uint64, s device.Stream) (p device.Ptr, release func(), err error)

// SetWorkspaceAllocator makes cuBLAS handles created from now on take their
// workspace from alloc instead of from the driver directly. A handle, and
// so its workspace, belongs to a stream of the backend, not to whoever
// first multiplied on it: when several runtimes share one Backend, alloc
// must draw on memory that outlives each of them (their shared pool), and
// it is set once, by the owner of the Backend.
func (b *Backend) SetWorkspaceAllocator(alloc WorkspaceAllocator) {
	b.mu.Lock()
	b.workspaceAlloc = alloc
	b.mu.Unlock()
}

// Gemm runs C = alpha·op(A)·op(B) + beta·C on row-major matrices through
// cublasGemmEx, or a batch of them through cublasGemmStridedBatchedEx,
// ordered on g.Stream. float16 and bfloat16 accumulate in float32; float32
// uses tensor cores (tf32) only when g.TF32 is set.
func (b *Backend) Gemm(g device.Gemm) error {
	c, err := columnMajorGemm(g)
	if err != nil {
		return err
	}
	if c.m == 0 || c.n == 0 {
		return nil
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	h, err := b.handle(g.Stream)
	if err != nil {
		return err
	}
	// alpha and beta live in host memory (CUBLAS_POINTER_MODE_HOST), typed
	// as the compute type wants: double for COMPUTE_64F, float otherwise.
	// Each uint64 holds a float32 in its low bytes on little-endian hosts.
	var scal [2]uint64
	if c.computeType == cublasCompute64F {
		scal[0], scal[1] = math.Float64bits(g.Alpha), math.Float64bits(g.Beta)
	} else {
		scal[0], scal[1] = uint64(math.Float32bits(float32(g.Alpha))), uint64(math.Float32bits(float32(g.Beta)))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 {
		return fmt.Errorf("cuda: Gemm: stream %#x was destroyed", uintptr(g.Stream))
	}
	if p := b.ltPlanFor(c, h); p != nil && p.ok {
		st := b.ltGemm(p, c, h, &scal, g.Stream)
		if blasOK(st) {
			return nil
		}
		return b.blasCheck("cublasLtMatmul", fmt.Sprintf("%s batch=%d M=%d N=%d K=%d", g.DType, max(g.Batch, 1), g.M, g.N, g.K), st)
	}
	algo := int32(cublasGemmDefault)
	if c.batch > 1 {
		// The strides are long long, one register each on amd64 and arm64.
		st := b.blas.cublasGemmStridedBatchedEx.call(h.h, uintptr(c.transA), uintptr(c.transB),
			uintptr(c.m), uintptr(c.n), uintptr(c.k),
			uintptr(unsafe.Pointer(&scal[0])),
			uintptr(c.a), uintptr(c.dataType), uintptr(c.lda), uintptr(int64(c.strideA)),
			uintptr(c.b), uintptr(c.dataType), uintptr(c.ldb), uintptr(int64(c.strideB)),
			uintptr(unsafe.Pointer(&scal[1])),
			uintptr(c.c), uintptr(c.dataType), uintptr(c.ldc), uintptr(int64(c.strideC)),
			uintptr(c.batch),
			uintptr(c.computeType), uintptr(uint32(algo)))
		if blasOK(st) { // the message is formatted for a failure only: this is every launch's path
			return nil
		}
		return b.blasCheck("cublasGemmStridedBatchedEx", fmt.Sprintf("%s batch=%d M=%d N=%d K=%d", g.DType, g.Batch, g.M, g.N, g.K), st)
	}
	st := b.blas.cublasGemmEx.call(h.h, uintptr(c.transA), uintptr(c.transB),
		uintptr(c.m), uintptr(c.n), uintptr(c.k),
		uintptr(unsafe.Pointer(&scal[0])),
		uintptr(c.a), uintptr(c.dataType), uintptr(c.lda),
		uintptr(c.b), uintptr(c.dataType), uintptr(c.ldb),
		uintptr(unsafe.Pointer(&scal[1])),
		uintptr(c.c), uintptr(c.dataType), uintptr(c.ldc),
		uintptr(c.computeType), uintptr(uint32(algo)))
	if blasOK(st) {
		return nil
	}
	return b.blasCheck("cublasGemmEx", fmt.Sprintf("%s M=%d N=%d K=%d", g.DType, g.M, g.N, g.K), st)
}

// handle returns the cuBLAS handle of stream s, creating it on first use.
// It runs inside begin/end.
func (b *Backend) handle(s device.Stream) (*blasHandle, error) {
	b.mu.Lock()
	h := b.handles[s]
	b.mu.Unlock()
	if h != nil {
		return h, nil
	}
	h = &blasHandle{}
	if err := b.blasCheck("cublasCreate", "", b.blas.cublasCreate.call(uintptr(unsafe.Pointer(&h.h)))); err != nil {
		return nil, err
	}
	if err := b.blasCheck("cublasSetStream", "", b.blas.cublasSetStream.call(h.h, uintptr(s))); err != nil {
		b.destroyHandle(h)
		return nil, err
	}
	// A workspace only lets cuBLAS choose faster kernels. Where the pool's
	// limits cannot hold one, a smaller one is tried, and at last none
	// (size 0, which cuBLAS accepts), so that a product the CPU backend
	// computes under a small hard limit is computed here too.
	size := uint64(blasWorkspaceBytes)
	ws, release, err := b.blasWorkspace(size, s)
	for err != nil && size > minBlasWorkspaceBytes {
		size /= 4
		ws, release, err = b.blasWorkspace(size, s)
	}
	if err != nil {
		ws, release, size = 0, nil, 0
	}
	h.workspace, h.workspaceSize, h.release = ws, size, release
	if err := b.blasCheck("cublasSetWorkspace", formatBytes(size), b.blas.cublasSetWorkspace.call(h.h, uintptr(ws), uintptr(size))); err != nil {
		b.destroyHandle(h)
		return nil, err
	}
	b.mu.Lock()
	other := b.handles[s]
	if other == nil {
		b.handles[s] = h
	}
	b.mu.Unlock()
	if other != nil { // another goroutine won the race
		// Destroyed outside b.mu: releasing the workspace calls into the
		// pool, which takes its own lock and, while holding it, calls
		// methods (NewEvent) that take b.mu.
		b.destroyHandle(h)
		return other, nil
	}
	return h, nil
}

// blasWorkspace allocates a cuBLAS workspace: from the allocator the
// runtime set (its pool), or from the driver.
func (b *Backend) blasWorkspace(nbytes uint64, s device.Stream) (device.Ptr, func(), error) {
	b.mu.Lock()
	alloc := b.workspaceAlloc
	b.mu.Unlock()
	if alloc != nil {
		return alloc(nbytes, s)
	}
	p, err := b.alloc(nbytes)
	return p, nil, err
}

// destroyHandle runs inside begin/end (or Close), without b.mu held: the
// workspace's release calls into the caller's pool (see handle).
func (b *Backend) destroyHandle(h *blasHandle) error {
	h.mu.Lock() // waits for a Gemm still enqueueing on the handle
	defer h.mu.Unlock()
	var first error
	if h.h != 0 {
		first = b.blasCheck("cublasDestroy", "", b.blas.cublasDestroy.call(h.h))
		h.h = 0
	}
	if h.release != nil {
		h.release()
		h.release, h.workspace = nil, 0
	}
	if h.workspace != 0 {
		if err := b.check("cuMemFree", "cuBLAS workspace", cuResult(b.drv.cuMemFree.call(uintptr(h.workspace)))); err != nil && first == nil {
			first = err
		}
		h.workspace = 0
	}
	return first
}

// blasCheck turns a cublasStatus_t into an error (nil on success).
func (b *Backend) blasCheck(call, detail string, r uintptr) error {
	if blasOK(r) {
		return nil
	}
	st := int(int32(uint32(r)))
	var name, desc string
	if b.blas.cublasGetStatusName != 0 {
		name = resultString(b.blas.cublasGetStatusName.call(uintptr(st)))
	}
	if b.blas.cublasGetStatusString != 0 {
		desc = resultString(b.blas.cublasGetStatusString.call(uintptr(st)))
	}
	return newCublasError(call, detail, st, name, desc)
}

// blasOK says whether r, a cuBLAS call's return, is CUBLAS_STATUS_SUCCESS
// (a 32-bit enum in the low bits).
func blasOK(r uintptr) bool { return int32(uint32(r)) == 0 }
