package cuda

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

// colMajorGemm is the BLAS definition of what cublasGemmEx computes:
// C = alpha·op(A)·op(B) + beta·C with column-major operands, addressed as
// offsets into one flat float64 "memory" so that the mapped call can be run
// against the very buffers the row-major caller laid out.
func colMajorGemm(mem []float64, c blasGemm, alpha, beta float64) {
	at := func(base device.Ptr, ld, i, j int) int { return int(base) + i + j*ld }
	for j := range c.n {
		for i := range c.m {
			var sum float64
			for l := range c.k {
				var a, b float64
				if c.transA == cublasOpN {
					a = mem[at(c.a, c.lda, i, l)]
				} else {
					a = mem[at(c.a, c.lda, l, i)]
				}
				if c.transB == cublasOpN {
					b = mem[at(c.b, c.ldb, l, j)]
				} else {
					b = mem[at(c.b, c.ldb, j, l)]
				}
				sum += a * b
			}
			p := at(c.c, c.ldc, i, j)
			mem[p] = alpha*sum + beta*mem[p]
		}
	}
}

func TestRowMajorGemmMapsOntoColumnMajorCuBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, transA := range []bool{false, true} {
		for _, transB := range []bool{false, true} {
			m, n, k := 5, 7, 3
			// Stored shapes, with padded rows to exercise the strides.
			rowsA, colsA := m, k
			if transA {
				rowsA, colsA = k, m
			}
			rowsB, colsB := k, n
			if transB {
				rowsB, colsB = n, k
			}
			lda, ldb, ldc := colsA+2, colsB+1, n+3
			// Lay A, B and C out one after another in "memory"; Ptr values
			// are element offsets into it.
			offA := 1 // 0 would be a null pointer
			offB := offA + rowsA*lda
			offC := offB + rowsB*ldb
			mem := make([]float64, offC+m*ldc)
			for i := range mem {
				mem[i] = rng.Float64()*2 - 1
			}
			A := func(i, l int) float64 { // op(A)[i][l]
				if transA {
					return mem[offA+l*lda+i]
				}
				return mem[offA+i*lda+l]
			}
			B := func(l, j int) float64 {
				if transB {
					return mem[offB+j*ldb+l]
				}
				return mem[offB+l*ldb+j]
			}
			alpha, beta := 1.5, -0.5
			want := append([]float64(nil), mem...)
			for i := range m {
				for j := range n {
					var s float64
					for l := range k {
						s += A(i, l) * B(l, j)
					}
					want[offC+i*ldc+j] = alpha*s + beta*mem[offC+i*ldc+j]
				}
			}
			c, err := columnMajorGemm(device.Gemm{
				DType: device.Float32, TransA: transA, TransB: transB,
				M: m, N: n, K: k, A: device.Ptr(offA), B: device.Ptr(offB), C: device.Ptr(offC),
				LDA: lda, LDB: ldb, LDC: ldc,
			})
			if err != nil {
				t.Fatal(err)
			}
			colMajorGemm(mem, c, alpha, beta)
			for i := range mem {
				if math.Abs(mem[i]-want[i]) > 1e-12 {
					t.Fatalf("transA=%v transB=%v: element %d = %v, want %v (padding included)", transA, transB, i, mem[i], want[i])
				}
			}
		}
	}
}

func TestGemmPicksTypesAndComputeModes(t *testing.T) {
	base := device.Gemm{M: 2, N: 3, K: 4, A: 256, B: 512, C: 768, LDA: 4, LDB: 3, LDC: 3}
	for _, tc := range []struct {
		dt      device.DType
		tf32    bool
		data    int
		compute int
	}{
		{device.Float32, false, cudaR32F, cublasCompute32F},
		{device.Float32, true, cudaR32F, cublasCompute32FFastTF32},
		{device.Float64, false, cudaR64F, cublasCompute64F},
		{device.Float64, true, cudaR64F, cublasCompute64F},
		{device.Float16, false, cudaR16F, cublasCompute32F},
		{device.BFloat16, false, cudaR16BF, cublasCompute32F},
	} {
		g := base
		g.DType, g.TF32 = tc.dt, tc.tf32
		c, err := columnMajorGemm(g)
		if err != nil {
			t.Fatalf("%s: %v", tc.dt, err)
		}
		if c.dataType != tc.data || c.computeType != tc.compute {
			t.Errorf("%s tf32=%v: data %d compute %d, want %d %d", tc.dt, tc.tf32, c.dataType, c.computeType, tc.data, tc.compute)
		}
		if c.m != 3 || c.n != 2 || c.k != 4 || c.a != 512 || c.b != 256 || c.lda != 3 || c.ldb != 4 || c.ldc != 3 {
			t.Errorf("%s: operands not swapped for column-major: %+v", tc.dt, c)
		}
	}
}

func TestGemmRejectsBadArgumentsBeforeCallingCuBLAS(t *testing.T) {
	ok := device.Gemm{DType: device.Float32, M: 2, N: 3, K: 4, A: 256, B: 512, C: 768, LDA: 4, LDB: 3, LDC: 3}
	for _, tc := range []struct {
		name string
		edit func(*device.Gemm)
		want string
	}{
		{"int dtype", func(g *device.Gemm) { g.DType = device.Int32 }, "int32 is not supported"},
		{"invalid dtype", func(g *device.Gemm) { g.DType = device.Invalid }, "not supported"},
		{"negative M", func(g *device.Gemm) { g.M = -1 }, "M=-1"},
		{"huge K", func(g *device.Gemm) { g.K = math.MaxInt32 + 1 }, "K=2147483648"},
		{"short LDA", func(g *device.Gemm) { g.LDA = 3 }, "LDA=3"},
		{"short LDA transposed", func(g *device.Gemm) { g.TransA = true; g.LDA = 1 }, "LDA=1 is shorter than the stored row length 2"},
		{"short LDB transposed", func(g *device.Gemm) { g.TransB = true; g.LDB = 3 }, "LDB=3"},
		{"short LDC", func(g *device.Gemm) { g.LDC = 2 }, "LDC=2"},
		{"null C", func(g *device.Gemm) { g.C = 0 }, "null matrix pointer"},
		{"null A", func(g *device.Gemm) { g.A = 0 }, "null matrix pointer"},
	} {
		g := ok
		tc.edit(&g)
		_, err := columnMajorGemm(g)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := columnMajorGemm(ok); err != nil {
		t.Errorf("valid product rejected: %v", err)
	}
	empty := ok
	empty.K, empty.A, empty.B, empty.LDA = 0, 0, 0, 0
	if c, err := columnMajorGemm(empty); err != nil || c.ldb != 1 {
		t.Errorf("K=0 (C = beta·C) rejected or lda not clamped to 1: %+v, %v", c, err)
	}
}

// stridedBatched is the definition of cublasGemmStridedBatchedEx: product
// i is colMajorGemm on each operand moved on by i times its stride.
func stridedBatched(mem []float64, c blasGemm, alpha, beta float64) {
	for i := range c.batch {
		one := c
		one.a += device.Ptr(i * c.strideA)
		one.b += device.Ptr(i * c.strideB)
		one.c += device.Ptr(i * c.strideC)
		colMajorGemm(mem, one, alpha, beta)
	}
}

// A batch with A shared (stride 0) and B and C one matrix per product
// maps onto the strided-batched call with the strides swapped as the
// operands are, and computes C[i] = alpha·op(A)·op(B[i]) + beta·C[i].
func TestBatchedRowMajorGemmMapsOntoStridedBatchedCuBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, transB := range []bool{false, true} {
		batch, m, n, k := 3, 4, 5, 2
		rowsB, colsB := k, n
		if transB {
			rowsB, colsB = n, k
		}
		offA := 1
		offB := offA + m*k
		offC := offB + batch*rowsB*colsB
		mem := make([]float64, offC+batch*m*n)
		for i := range mem {
			mem[i] = rng.Float64()*2 - 1
		}
		alpha, beta := 0.5, 2.0
		want := append([]float64(nil), mem...)
		for b := range batch {
			for i := range m {
				for j := range n {
					var s float64
					for l := range k {
						bv := mem[offB+b*rowsB*colsB+l*colsB+j]
						if transB {
							bv = mem[offB+b*rowsB*colsB+j*colsB+l]
						}
						s += mem[offA+i*k+l] * bv
					}
					p := offC + b*m*n + i*n + j
					want[p] = alpha*s + beta*mem[p]
				}
			}
		}
		c, err := columnMajorGemm(device.Gemm{
			DType: device.Float64, TransB: transB, M: m, N: n, K: k,
			A: device.Ptr(offA), B: device.Ptr(offB), C: device.Ptr(offC), LDA: k, LDB: colsB, LDC: n,
			Batch: batch, StrideA: 0, StrideB: rowsB * colsB, StrideC: m * n,
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.batch != batch || c.strideA != rowsB*colsB || c.strideB != 0 || c.strideC != m*n {
			t.Fatalf("strides not swapped with the operands: %+v", c)
		}
		stridedBatched(mem, c, alpha, beta)
		for i := range mem {
			if math.Abs(mem[i]-want[i]) > 1e-12 {
				t.Fatalf("transB=%v: element %d = %v, want %v", transB, i, mem[i], want[i])
			}
		}
	}
}

func TestBatchedGemmRejectsOverlappingOutputs(t *testing.T) {
	g := device.Gemm{DType: device.Float32, M: 2, N: 3, K: 4, A: 256, B: 512, C: 768, LDA: 4, LDB: 3, LDC: 3,
		Batch: 2, StrideA: 8, StrideB: 12, StrideC: 5}
	if _, err := columnMajorGemm(g); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("C matrices 5 elements apart, each 6: %v", err)
	}
	g.StrideC, g.StrideB = 6, -1
	if _, err := columnMajorGemm(g); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("a negative stride: %v", err)
	}
}
