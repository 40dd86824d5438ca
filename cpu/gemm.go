package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// Gemm runs C = alpha·op(A)·op(B) + beta·C on row-major matrices through
// gonum's BLAS, whose Sgemm and Dgemm are row-major, so float32 and float64
// run in place on the arrays' own memory. float16 and bfloat16 are widened
// to float32, multiplied, and rounded back to nearest even, which is what
// cuBLAS does with a float32 compute type. The TF32 flag is ignored: plain
// float32 is at least as accurate. A batch runs its products in turn.
func (b *Backend) Gemm(g device.Gemm) error {
	if err := validGemm(g); err != nil {
		return err
	}
	if g.Batch > 1 {
		// A batch is its products one after another, as cuBLAS's
		// strided-batched GEMM defines it; each is checked against the
		// memory it spans.
		esize := device.Ptr(g.DType.Size())
		for i := range g.Batch {
			one := g
			one.Batch, one.StrideA, one.StrideB, one.StrideC = 0, 0, 0, 0
			one.A += device.Ptr(i*g.StrideA) * esize
			one.B += device.Ptr(i*g.StrideB) * esize
			one.C += device.Ptr(i*g.StrideC) * esize
			if err := b.Gemm(one); err != nil {
				return err
			}
		}
		return nil
	}
	a := matrix{name: "A", p: g.A, rows: g.M, cols: g.K, ld: g.LDA}
	if g.TransA {
		a.rows, a.cols = g.K, g.M
	}
	bm := matrix{name: "B", p: g.B, rows: g.K, cols: g.N, ld: g.LDB}
	if g.TransB {
		bm.rows, bm.cols = g.N, g.K
	}
	c := matrix{name: "C", p: g.C, rows: g.M, cols: g.N, ld: g.LDC}
	esize := g.DType.Size()
	var uses []use
	if g.M > 0 && g.N > 0 {
		uses = []use{a.use(esize, false), bm.use(esize, false), c.use(esize, true)}
	}
	replay := g
	replay.Stream = 0
	if rec, err := b.recorded(g.Stream, "matmul", uses, func() error { return b.checkStream("matmul", g.Stream) }, func() error { return b.Gemm(replay) }); rec {
		return err
	}

	b.mu.Lock()
	err := b.checkStream("matmul", g.Stream)
	for _, m := range []*matrix{&a, &bm, &c} {
		if err == nil {
			err = b.locate(m, esize)
		}
	}
	if err == nil && len(uses) > 0 {
		err = b.follow("matmul", g.Stream, uses...)
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if g.M == 0 || g.N == 0 {
		return nil
	}
	if g.K == 0 {
		// gonum asks for (M-1)·LDA elements of A even when K is 0, so the
		// empty product is done here: C = beta·C.
		c.scale(g.DType, g.Beta)
		return nil
	}

	tA, tB := blas.NoTrans, blas.NoTrans
	if g.TransA {
		tA = blas.Trans
	}
	if g.TransB {
		tB = blas.Trans
	}
	switch g.DType {
	case device.Float64:
		a64, b64, c64 := float64s(a.data), float64s(bm.data), float64s(c.data)
		gonum.Implementation{}.Dgemm(tA, tB, g.M, g.N, g.K, g.Alpha, a64, a.ld, b64, bm.ld, g.Beta, c64, c.ld)
		zeroTimesNonFinite(g, a64, a.ld, b64, bm.ld, c64, c.ld)
	case device.Float32:
		a32, b32, c32 := float32s(a.data), float32s(bm.data), float32s(c.data)
		gonum.Implementation{}.Sgemm(tA, tB, g.M, g.N, g.K,
			float32(g.Alpha), a32, a.ld, b32, bm.ld, float32(g.Beta), c32, c.ld)
		zeroTimesNonFinite(g, a32, a.ld, b32, bm.ld, c32, c.ld)
		arithNaNs(c32, g.M, g.N, c.ld)
	default:
		load, store := device.Float16Value, device.Float16Bits
		if g.DType == device.BFloat16 {
			load, store = device.BFloat16Value, device.BFloat16Bits
		}
		a32, b32 := a.widen(load), bm.widen(load)
		var c32 []float32
		if g.Beta != 0 {
			c32 = c.widen(load)
		} else {
			// beta = 0 means C is not read, so NaNs left in it by an
			// earlier use do not leak into the result (BLAS semantics).
			c32 = make([]float32, c.rows*c.cols)
		}
		gonum.Implementation{}.Sgemm(tA, tB, g.M, g.N, g.K,
			float32(g.Alpha), a32, max(1, a.cols), b32, max(1, bm.cols), float32(g.Beta), c32, max(1, c.cols))
		zeroTimesNonFinite(g, a32, max(1, a.cols), b32, max(1, bm.cols), c32, max(1, c.cols))
		// cuBLAS's NaN result of a 2-byte product is 0x7fff
		c.narrow(c32, func(f float32) uint16 {
			if f != f {
				return 0x7fff
			}
			return store(f)
		})
	}
	return nil
}

// zeroTimesNonFinite puts back the NaNs gonum leaves out. Its Gemm skips a
// product whose A factor times alpha is 0, where IEEE arithmetic, and
// cuBLAS, make 0·∞ and 0·NaN a NaN: an infinity or a NaN in B would never
// reach C, which would hold a number instead. For each l it pairs the zeros
// of A's column l with the non-finite values of B's row l, reading the
// shorter of the two first, so that a matrix-vector product (M = 1) reads
// A's row rather than all of B. With alpha = 0 BLAS reads neither A nor
// B, and this reads nothing.
func zeroTimesNonFinite[E float32 | float64](g device.Gemm, a []E, lda int, b []E, ldb int, c []E, ldc int) {
	if g.Alpha == 0 {
		return
	}
	alpha := E(g.Alpha)
	opA := func(i, l int) E {
		if g.TransA {
			return a[l*lda+i]
		}
		return a[i*lda+l]
	}
	opB := func(l, j int) E {
		if g.TransB {
			return b[j*ldb+l]
		}
		return b[l*ldb+j]
	}
	zeros := func(l int, out []int) []int {
		for i := range g.M {
			if alpha*opA(i, l) == 0 {
				out = append(out, i)
			}
		}
		return out
	}
	nonFinite := func(l int, out []int) []int {
		for j := range g.N {
			if v := opB(l, j); v-v != 0 {
				out = append(out, j)
			}
		}
		return out
	}
	var rows, cols []int
	for l := range g.K {
		if g.M <= g.N {
			if rows = zeros(l, rows[:0]); len(rows) > 0 {
				cols = nonFinite(l, cols[:0])
			}
		} else if cols = nonFinite(l, cols[:0]); len(cols) > 0 {
			rows = zeros(l, rows[:0])
		}
		if len(rows) == 0 || len(cols) == 0 {
			continue
		}
		for _, i := range rows {
			for _, j := range cols {
				v := float64(opB(l, j))
				c[i*ldc+j] = E(kernels.ArithNaN64(v, v))
			}
		}
	}
}

// arithNaNs makes each NaN of a float32 product the GPU's: cuBLAS computes
// in float32, whose arithmetic gives one NaN (kernels.ArithNaN32).
func arithNaNs(c []float32, rows, cols, ld int) {
	for i := range rows {
		row := c[i*ld : i*ld+cols]
		for j, v := range row {
			if v != v {
				row[j] = kernels.ArithNaN32
			}
		}
	}
}

// matrix is one operand of a Gemm as stored: rows×cols elements, row i
// starting ld elements after row i-1.
type matrix struct {
	name       string
	p          device.Ptr
	rows, cols int
	ld         int
	data       []byte // exactly the bytes the matrix spans
}

// locate checks m's stride, alignment and extent and points m.data at its
// memory. b.mu must be held.
func (b *Backend) locate(m *matrix, esize int) error {
	if m.ld < max(1, m.cols) {
		return fmt.Errorf("matmul: LD%s=%d is smaller than the %d columns of %s", m.name, m.ld, m.cols, m.name)
	}
	if m.rows == 0 || m.cols == 0 {
		return nil // spans no memory, so its address is never read
	}
	if m.cols > math.MaxInt/esize || m.rows-1 > (math.MaxInt/esize-m.cols)/m.ld {
		return fmt.Errorf("matmul: %s (%dx%d with LD%s=%d) is larger than any allocation", m.name, m.rows, m.cols, m.name, m.ld)
	}
	if uint64(m.p)%uint64(esize) != 0 {
		return fmt.Errorf("matmul: %s at %#x is not aligned to its %d-byte elements", m.name, uint64(m.p), esize)
	}
	n := uint64(((m.rows-1)*m.ld + m.cols) * esize)
	what := fmt.Sprintf("%s (%dx%d with LD%s=%d)", m.name, m.rows, m.cols, m.name, m.ld)
	data, err := b.region("matmul", what, m.p, n)
	if err != nil {
		return err
	}
	m.data = data
	return nil
}

// scale sets the matrix to beta times itself in its dtype's arithmetic;
// beta = 0 writes zeros without reading, as BLAS does.
func (m *matrix) scale(dt device.DType, beta float64) {
	for i := 0; i < m.rows; i++ {
		switch dt {
		case device.Float64:
			row := float64s(m.data)[i*m.ld : i*m.ld+m.cols]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] *= beta
				}
			}
		case device.Float32:
			row := float32s(m.data)[i*m.ld : i*m.ld+m.cols]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] *= float32(beta)
				}
			}
		default:
			load, store := device.Float16Value, device.Float16Bits
			if dt == device.BFloat16 {
				load, store = device.BFloat16Value, device.BFloat16Bits
			}
			row := uint16s(m.data)[i*m.ld : i*m.ld+m.cols]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] = store(float32(beta) * load(row[j]))
				}
			}
		}
	}
}

// widen copies a 2-byte float matrix into a dense float32 one.
func (m *matrix) widen(load func(uint16) float32) []float32 {
	out := make([]float32, m.rows*m.cols)
	src := uint16s(m.data)
	for i := 0; i < m.rows; i++ {
		row := src[i*m.ld : i*m.ld+m.cols]
		dst := out[i*m.cols : (i+1)*m.cols]
		for j, h := range row {
			dst[j] = load(h)
		}
	}
	return out
}

// narrow rounds a dense float32 matrix back into m's 2-byte storage.
func (m *matrix) narrow(v []float32, store func(float32) uint16) {
	dst := uint16s(m.data)
	for i := 0; i < m.rows; i++ {
		row := dst[i*m.ld : i*m.ld+m.cols]
		for j, f := range v[i*m.cols : (i+1)*m.cols] {
			row[j] = store(f)
		}
	}
}

// The typed views below reinterpret element-aligned allocation memory (see
// alignedBytes and locate's alignment check). New refuses big-endian hosts,
// where they would not read the stored little-endian values.
func float32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil // an operand that spans no memory
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func float64s(b []byte) []float64 {
	if len(b) < 8 {
		return nil // an operand that spans no memory
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
}

func uint16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil // an operand that spans no memory
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// validGemm refuses a product of a dtype or sizes Gemm cannot run.
func validGemm(g device.Gemm) error {
	switch g.DType {
	case device.Float32, device.Float64, device.Float16, device.BFloat16:
	case device.Int32, device.Int64, device.Uint8:
		return fmt.Errorf("matmul: %s is not supported (float32, float64, float16, bfloat16)", g.DType)
	default:
		return fmt.Errorf("matmul: invalid dtype %s", g.DType)
	}
	if g.M < 0 || g.N < 0 || g.K < 0 {
		return fmt.Errorf("matmul: sizes must not be negative (M=%d, N=%d, K=%d)", g.M, g.N, g.K)
	}
	if err := g.CheckBatch(); err != nil {
		return fmt.Errorf("matmul: %w", err)
	}
	return nil
}

// use is the device bytes m spans, from its first element to its last,
// for order.
func (m *matrix) use(esize int, write bool) use {
	n := uint64(0)
	if m.rows > 0 && m.cols > 0 {
		n = uint64(((m.rows-1)*m.ld + m.cols) * esize)
	}
	return use{m.name, m.p, n, write}
}
