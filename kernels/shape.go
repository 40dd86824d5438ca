package kernels

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// The launch shape of elementwise kernels, the built-ins' and
// kernels.map's alike: blocks of ElementwiseThreads threads, each thread
// taking VectorsPerThread 16-byte vectors, or ElementsPerThread elements
// where an operand is not 16-byte aligned, per round, all loaded before
// it computes. The grid covers every unit when elementwiseBlocksPerSM is
// 0 (a one-shot grid, PyTorch's shape), and otherwise stops at that many
// blocks per multiprocessor, each thread looping over the rest.
//
// scripts/bench/shape.cu times these shapes and their alternatives in
// CUDA C. On an H100 (BENCHMARKS.md, 2026-11-28), for float32 a·x + y and
// a five-step map on 2^28 elements, every one-shot grid moved 3038-3054
// and 2954-3027 GB/s (PyTorch's add_ 3043, torch.compile's chain 2908),
// whatever its vectors per thread (1 to 8) and block (128 to 512); the
// grid-stride loops of 8192 blocks or of 2 to 32 blocks per
// multiprocessor reached 2729-2937 and 2332-2876. Indices of 32 bits
// gained nothing over 64. So: one-shot, one vector a thread, which keeps
// the unrolled code NVRTC compiles small, and blocks of 256, which launch
// whatever registers a map's body needs (512 threads of more than 128
// registers would not fit a multiprocessor's 65536). Elements go 4 to a
// thread, PyTorch's count for its unvectorised loop, so that a thread
// keeps as many bytes in flight as a vector of 4-byte elements.
const (
	ElementwiseThreads     = 256
	VectorsPerThread       = 1
	ElementsPerThread      = 4
	elementwiseBlocksPerSM = 0
	// maxGridX is CUDA's limit on a grid's x dimension.
	maxGridX = 1<<31 - 1
	// defaultMultiprocessors stands in for a device that does not say
	// how many it has: an H100's count.
	defaultMultiprocessors = 132
)

// ElementwiseShape is the grid and block of an elementwise kernel over n
// elements of size bytes on a device of sms multiprocessors (0 when
// unknown), moved as 16-byte vectors when vec is set (the tail of fewer
// than a vector's elements rides with the grid's first threads).
func ElementwiseShape(sms, n, size int, vec bool) (grid, block [3]uint32) {
	units, per := n, ElementwiseThreads*ElementsPerThread
	if vec {
		units, per = n/(16/size), ElementwiseThreads*VectorsPerThread
	}
	b := (units + per - 1) / per
	if elementwiseBlocksPerSM > 0 {
		if sms < 1 {
			sms = defaultMultiprocessors
		}
		b = min(b, sms*elementwiseBlocksPerSM)
	}
	return [3]uint32{uint32(min(max(b, 1), maxGridX)), 1, 1}, [3]uint32{ElementwiseThreads, 1, 1}
}

// ElementwiseResidency is the dynamic shared memory, unused by the kernel,
// with which an elementwise kernel that reads inputs arrays launches over
// 16-byte vectors on a device of compute capability cc, and the carveout
// (the percent of each multiprocessor's unified L1 and shared memory kept
// as shared memory) it prefers; 0, 0 launches as a kernel without shared
// memory does. Reserving shared memory holds a multiprocessor to fewer
// resident blocks, which HBM serves faster than a full complement when
// two arrays are read and one written; the carveout keeps most of the L1
// that the loads go through (a carveout of 100% alone cost 3%). On an
// H200 (BENCHMARKS.md, 2026-11-29), kernels.add in place on 2^28 elements
// ran at 0.99 of PyTorch's add_ in float16 and bfloat16 without it and at
// 1.000-1.004 with it, float32 went from level to 1.008, and every dtype
// gained 0.4-1.2%; 24 KiB lost 3% in the 2-byte dtypes, and 16 KiB at the
// driver's own carveout gained a third as much. A kernel that reads one
// array and writes one (kernels.scale, a map of one array) lost 3-5% with
// it, so it is kept for two inputs or more. It is set for compute
// capability 9.0 only (H100 and H200, 228 KiB of shared memory per
// multiprocessor), and measured on an H200.
func ElementwiseResidency(cc [2]int, inputs int) (shared uint32, carveout int) {
	if cc == [2]int{9, 0} && inputs >= 2 {
		return 16 << 10, 50
	}
	return 0, 0
}

// ConvertShape is the grid and block of a conversion of n elements
// between dtypes a and b (convert.cu): a one-shot grid whose threads each
// take 16 bytes' worth of elements of the narrower dtype.
func ConvertShape(n int, a, b device.DType) (grid, block [3]uint32) {
	return ElementwiseShape(0, n, min(a.Size(), b.Size()), true)
}

// FillVectorsPerThread is the 16-byte stores a thread of kernels.fill
// makes, a block's width apart, on a one-shot grid. On an H200, 2^28
// float32 (BENCHMARKS.md, 2026-11-28): one store a thread 0.273 ms, the
// former grid-stride loop of 8192 blocks 0.246, four or eight stores a
// thread 0.234-0.235, PyTorch's fill_ 0.231.
const FillVectorsPerThread = 4

// FillShape is the grid and block of kernels.fill over nbytes.
func FillShape(nbytes int) (grid, block [3]uint32) {
	per := ElementwiseThreads * FillVectorsPerThread * 16
	b := (nbytes + per - 1) / per
	return [3]uint32{uint32(min(max(b, 1), maxGridX)), 1, 1}, [3]uint32{ElementwiseThreads, 1, 1}
}

// unitsDefine is the C definitions the CUDA C of every elementwise loop
// reads (dtypes.cu).
var unitsDefine = fmt.Sprintf("#define GLUA_VECTORS_PER_THREAD %d\n#define GLUA_ELEMENTS_PER_THREAD %d\n#define GLUA_FILL_VECTORS_PER_THREAD %d\n",
	VectorsPerThread, ElementsPerThread, FillVectorsPerThread)

// Index32 says whether an elementwise kernel over n elements indexes
// them with 32 bits: dtypes.cu's index32, which the built-ins test on
// the device and a map's module, written for one index type, is chosen
// by (jit.MapCUDA).
func Index32(n int) bool { return n <= 0x7fff0000 }
