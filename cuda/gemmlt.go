package cuda

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// Small products go through cuBLASLt with a plan kept per shape. A
// product small enough to take a few microseconds on the device is bound
// by the host, and cublasGemmEx spends most of its host time choosing the
// kernel again on every call: a CUDA C loop on an H200 queued a
// 1024 × 64² bfloat16 batch in 8.2–10.2 µs through
// cublasGemmStridedBatchedEx and in 6.9–7.5 µs through cublasLtMatmul with
// the heuristic's choice kept, and a 2×2 float32 product in 6.0–7.6
// against 4.7–5.0 µs. Large products, bound by the device, stay on
// cublasGemmEx, so their kernels are the ones PyTorch's calls get.

// ltMaxFlops is the largest product (2·batch·M·N·K) that takes the
// planned path: about 10 µs of bfloat16 work on an H100.
const ltMaxFlops = 1 << 31

// ltMaxPlans bounds the plans kept; shapes beyond it use cublasGemmEx.
const ltMaxPlans = 256

// cublasLtAPI holds the cuBLASLt functions glua calls.
type cublasLtAPI struct {
	cublasLtCreate                       fn
	cublasLtDestroy                      fn
	cublasLtMatmulDescCreate             fn
	cublasLtMatmulDescDestroy            fn
	cublasLtMatmulDescSetAttribute       fn
	cublasLtMatrixLayoutCreate           fn
	cublasLtMatrixLayoutDestroy          fn
	cublasLtMatrixLayoutSetAttribute     fn
	cublasLtMatmulPreferenceCreate       fn
	cublasLtMatmulPreferenceDestroy      fn
	cublasLtMatmulPreferenceSetAttribute fn
	cublasLtMatmulAlgoGetHeuristic       fn
	cublasLtMatmul                       fn
}

func (c *cublasLtAPI) symbols() []symbol {
	return []symbol{
		{"cublasLtCreate", &c.cublasLtCreate, false},
		{"cublasLtDestroy", &c.cublasLtDestroy, false},
		{"cublasLtMatmulDescCreate", &c.cublasLtMatmulDescCreate, false},
		{"cublasLtMatmulDescDestroy", &c.cublasLtMatmulDescDestroy, false},
		{"cublasLtMatmulDescSetAttribute", &c.cublasLtMatmulDescSetAttribute, false},
		{"cublasLtMatrixLayoutCreate", &c.cublasLtMatrixLayoutCreate, false},
		{"cublasLtMatrixLayoutDestroy", &c.cublasLtMatrixLayoutDestroy, false},
		{"cublasLtMatrixLayoutSetAttribute", &c.cublasLtMatrixLayoutSetAttribute, false},
		{"cublasLtMatmulPreferenceCreate", &c.cublasLtMatmulPreferenceCreate, false},
		{"cublasLtMatmulPreferenceDestroy", &c.cublasLtMatmulPreferenceDestroy, false},
		{"cublasLtMatmulPreferenceSetAttribute", &c.cublasLtMatmulPreferenceSetAttribute, false},
		{"cublasLtMatmulAlgoGetHeuristic", &c.cublasLtMatmulAlgoGetHeuristic, false},
		{"cublasLtMatmul", &c.cublasLtMatmul, false},
	}
}

// cublasLt.h constants.
const (
	ltDescTransA          = 3 // CUBLASLT_MATMUL_DESC_TRANSA, int32
	ltDescTransB          = 4 // CUBLASLT_MATMUL_DESC_TRANSB, int32
	ltLayoutBatchCount    = 5 // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	ltLayoutBatchStride   = 6 // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	ltPrefMaxWorkspace    = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	ltPrefMinAlignmentA   = 5 // CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32; B, C, D follow
	ltHeuristicResultSize = 96
)

// ltHeuristicResult is cublasLtMatmulHeuristicResult_t.
type ltHeuristicResult struct {
	algo          [8]uint64 // cublasLtMatmulAlgo_t
	workspaceSize uint64
	state         int32
	waves         float32
	_             [4]int32
}

// The C layout's size, checked both ways.
var (
	_ [ltHeuristicResultSize - unsafe.Sizeof(ltHeuristicResult{})]byte
	_ [unsafe.Sizeof(ltHeuristicResult{}) - ltHeuristicResultSize]byte
)

// ltState is the backend's cuBLASLt: the library, found beside cuBLAS,
// and the handle and plans, made on first use and released by Close.
type ltState struct {
	api    cublasLtAPI
	loaded bool // the library and all its symbols were found

	mu     sync.Mutex
	handle uintptr
	failed bool // cublasLtCreate failed: every product uses cublasGemmEx
	plans  map[ltKey]*ltPlan
}

// ltKey is what a plan depends on: the product in cuBLAS's terms, each
// operand's address alignment, and the workspace the kernel may use.
type ltKey struct {
	c                      blasGemm // its pointers zeroed
	alignA, alignB, alignC uint32
	workspace              uint64
}

// ltPlan is a product's descriptors and the kernel the heuristic chose,
// or none (ok false), when cublasGemmEx serves the shape.
type ltPlan struct {
	ok         bool
	desc       uintptr
	la, lb, lc uintptr
	algo       ltHeuristicResult
}

// openLt loads cuBLASLt from beside the cuBLAS library that loaded (cuBLAS
// itself depends on it, so it is normally mapped already). Without it
// every product uses cublasGemmEx.
func (b *Backend) openLt() {
	name := b.libs[2].name
	i := strings.LastIndex(name, "libcublas")
	if i < 0 {
		return
	}
	ltName := name[:i] + "libcublasLt" + name[i+len("libcublas"):]
	lib, err := openLibrary("cuBLASLt", []string{ltName})
	if err != nil {
		return
	}
	if lib.resolve(b.lt.api.symbols()) != nil {
		return
	}
	b.lt.loaded = true
}

// describeLt is Describe's line on the small products' path.
func (b *Backend) describeLt() string {
	lt := &b.lt
	lt.mu.Lock()
	defer lt.mu.Unlock()
	switch {
	case !lt.loaded:
		return "small matrix products: cublasGemmEx (cuBLASLt not found beside cuBLAS)"
	case lt.failed:
		return "small matrix products: cublasGemmEx (cublasLtCreate failed)"
	}
	return fmt.Sprintf("small matrix products: cuBLASLt, a plan kept per shape (%d so far)", lt.planned())
}

// planned is how many shapes run through a plan; lt.mu is held.
func (lt *ltState) planned() int {
	n := 0
	for _, p := range lt.plans {
		if p.ok {
			n++
		}
	}
	return n
}

// alignment is the largest power of two up to 256 that divides p.
func alignment(p device.Ptr) uint32 {
	a := uint32(256)
	for a > 1 && uint64(p)%uint64(a) != 0 {
		a /= 2
	}
	return a
}

// ltPlanFor returns the plan for product c on handle h, making it on
// first use; nil means cublasGemmEx. It runs inside begin/end with h.mu
// held.
func (b *Backend) ltPlanFor(c blasGemm, h *blasHandle) *ltPlan {
	lt := &b.lt
	if 2*float64(max(c.batch, 1))*float64(c.m)*float64(c.n)*float64(c.k) > ltMaxFlops {
		return nil
	}
	if c.batch > 1 && (c.strideA == 0 || c.strideB == 0) {
		return nil // an operand shared by the batch: strided-batched cuBLAS
	}
	key := ltKey{c: c, alignA: alignment(c.a), alignB: alignment(c.b), alignC: alignment(c.c), workspace: h.workspaceSize}
	key.c.a, key.c.b, key.c.c = 0, 0, 0
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if !lt.loaded {
		return nil
	}
	if p := lt.plans[key]; p != nil {
		return p
	}
	if lt.failed || len(lt.plans) >= ltMaxPlans {
		return nil
	}
	if lt.handle == 0 {
		if lt.api.cublasLtCreate.call(uintptr(unsafe.Pointer(&lt.handle))) != 0 {
			lt.handle, lt.failed = 0, true
			return nil
		}
		lt.plans = map[ltKey]*ltPlan{}
	}
	p := b.makeLtPlan(key)
	lt.plans[key] = p
	return p
}

// makeLtPlan builds key's descriptors and asks the heuristic for one
// kernel. Any refusal gives a plan that is not ok, so the shape stays on
// cublasGemmEx.
func (b *Backend) makeLtPlan(key ltKey) *ltPlan {
	api, c := &b.lt.api, key.c
	p := &ltPlan{}
	scale := cudaR32F
	if c.computeType == cublasCompute64F {
		scale = cudaR64F
	}
	if api.cublasLtMatmulDescCreate.call(uintptr(unsafe.Pointer(&p.desc)), uintptr(c.computeType), uintptr(scale)) != 0 {
		p.desc = 0
		return p
	}
	setInt32 := func(set fn, obj uintptr, attr int, v int32) bool {
		return set.call(obj, uintptr(attr), uintptr(unsafe.Pointer(&v)), 4) == 0
	}
	ok := setInt32(api.cublasLtMatmulDescSetAttribute, p.desc, ltDescTransA, int32(c.transA)) &&
		setInt32(api.cublasLtMatmulDescSetAttribute, p.desc, ltDescTransB, int32(c.transB))
	layout := func(dst *uintptr, trans, rows, cols, ld, stride int) bool {
		if trans != cublasOpN {
			rows, cols = cols, rows
		}
		if api.cublasLtMatrixLayoutCreate.call(uintptr(unsafe.Pointer(dst)), uintptr(c.dataType), uintptr(rows), uintptr(cols), uintptr(ld)) != 0 {
			*dst = 0
			return false
		}
		if c.batch <= 1 {
			return true
		}
		s := int64(stride)
		return setInt32(api.cublasLtMatrixLayoutSetAttribute, *dst, ltLayoutBatchCount, int32(c.batch)) &&
			api.cublasLtMatrixLayoutSetAttribute.call(*dst, ltLayoutBatchStride, uintptr(unsafe.Pointer(&s)), 8) == 0
	}
	ok = ok && layout(&p.la, c.transA, c.m, c.k, c.lda, c.strideA) &&
		layout(&p.lb, c.transB, c.k, c.n, c.ldb, c.strideB) &&
		layout(&p.lc, cublasOpN, c.m, c.n, c.ldc, c.strideC)
	var pref uintptr
	ok = ok && api.cublasLtMatmulPreferenceCreate.call(uintptr(unsafe.Pointer(&pref))) == 0
	if pref != 0 {
		defer api.cublasLtMatmulPreferenceDestroy.call(pref)
		ws := key.workspace
		ok = ok && api.cublasLtMatmulPreferenceSetAttribute.call(pref, ltPrefMaxWorkspace, uintptr(unsafe.Pointer(&ws)), 8) == 0
		for i, a := range []uint32{key.alignA, key.alignB, key.alignC, key.alignC} {
			ok = ok && api.cublasLtMatmulPreferenceSetAttribute.call(pref, uintptr(ltPrefMinAlignmentA+i), uintptr(unsafe.Pointer(&a)), 4) == 0
		}
	}
	var found int32
	ok = ok && api.cublasLtMatmulAlgoGetHeuristic.call(b.lt.handle, p.desc, p.la, p.lb, p.lc, p.lc, pref, 1,
		uintptr(unsafe.Pointer(&p.algo)), uintptr(unsafe.Pointer(&found))) == 0
	p.ok = ok && found == 1 && p.algo.state == 0 && p.algo.workspaceSize <= key.workspace
	if !p.ok {
		b.destroyLtPlan(p)
	}
	return p
}

// ltGemm queues product c by plan p, with alpha and beta at scal.
func (b *Backend) ltGemm(p *ltPlan, c blasGemm, h *blasHandle, scal *[2]uint64, s device.Stream) uintptr {
	return b.lt.api.cublasLtMatmul.call(b.lt.handle, p.desc,
		uintptr(unsafe.Pointer(&scal[0])), uintptr(c.a), p.la, uintptr(c.b), p.lb,
		uintptr(unsafe.Pointer(&scal[1])), uintptr(c.c), p.lc, uintptr(c.c), p.lc,
		uintptr(unsafe.Pointer(&p.algo.algo)), uintptr(h.workspace), uintptr(h.workspaceSize), uintptr(s))
}

func (b *Backend) destroyLtPlan(p *ltPlan) {
	api := &b.lt.api
	for _, l := range []*uintptr{&p.la, &p.lb, &p.lc} {
		if *l != 0 {
			api.cublasLtMatrixLayoutDestroy.call(*l)
			*l = 0
		}
	}
	if p.desc != 0 {
		api.cublasLtMatmulDescDestroy.call(p.desc)
		p.desc = 0
	}
	p.ok = false
}

// closeLt releases the plans and the handle; Close calls it.
func (b *Backend) closeLt() error {
	lt := &b.lt
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, p := range lt.plans {
		b.destroyLtPlan(p)
	}
	lt.plans = nil
	if lt.handle == 0 {
		return nil
	}
	h := lt.handle
	lt.handle = 0
	return b.blasCheck("cublasLtDestroy", "", lt.api.cublasLtDestroy.call(h))
}
