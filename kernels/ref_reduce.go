package kernels

import (
	"math"

	"github.com/gluaproject/glua/device"
)

// Sum is the sum of x's elements: accumulated in float64 for the float
// dtypes; for the integer dtypes in int64, wrapping as NumPy's sum does,
// and rounded to float64 once at the end.
func Sum(dt device.DType, x []byte) float64 {
	count("Sum", dt, x)
	switch dt {
	case device.Int32:
		return float64(sumInts[int32](x))
	case device.Int64:
		return float64(sumInts[int64](x))
	case device.Uint8:
		return float64(sumInts[uint8](x))
	}
	return reducedNaN(accumulate("Sum", dt, x, false))
}

// sumInts is the sum of integer elements modulo 2^64, exact whatever the
// order, as int64.
func sumInts[S intCompute](x []byte) int64 {
	xs, _ := view[S](x)
	var s int64
	for _, v := range xs {
		s += int64(v)
	}
	return s
}

// Norm is the Euclidean norm of x, accumulated in float64. It is not guarded
// against overflow of the squares: float64 holds the square of any float32.
func Norm(dt device.DType, x []byte) float64 {
	return reducedNaN(math.Sqrt(accumulate("Norm", dt, x, true)))
}

// accumulate is the float64 sum of x's elements, or of their squares, in
// the order of the GPU's kernels (blockedSum), so that both backends give
// the same bits.
func accumulate(op string, dt device.DType, x []byte, square bool) float64 {
	n := count(op, dt, x)
	lanes := 16 / dt.Size() // elements in the kernels' 16-byte vector
	switch dt {
	case device.Float64:
		return blockedSum(viewOf[float64](x), lanes, square)
	case device.Float32:
		return blockedSum(viewOf[float32](x), lanes, square)
	case device.Float16, device.BFloat16:
		load, _ := halfCodec(dt)
		wide := make([]float32, n)
		for i, h := range viewOf[uint16](x) {
			wide[i] = load(h)
		}
		return blockedSum(wide, lanes, square)
	case device.Int32:
		return blockedSum(viewOf[int32](x), lanes, square)
	case device.Int64:
		return blockedSum(viewOf[int64](x), lanes, square)
	case device.Uint8:
		return blockedSum(x[:n], lanes, square)
	}
	panic("kernels." + op + ": no dtype " + dt.String())
}

// viewOf is x's elements as a read-only slice.
func viewOf[T word](x []byte) []T {
	xs, _ := view[T](x)
	return xs
}

// blockedSum adds xs (or their squares) in float64 in reduce.cu's order:
// xs in vectors of lanes elements (16 bytes of the dtype), a contiguous
// run of them per block of reduceBlocks(len(xs)), thread t of a block
// taking the run's vectors t, t + reduceThreads, ..., its k-th into its
// accumulator k % reduceAccumulators; a thread's accumulators added in
// order, the block's threads in a tree, the partials by finishSum.
func blockedSum[E float32 | float64 | int32 | int64 | uint8](xs []E, lanes int, square bool) float64 {
	n := len(xs)
	vectors := (n + lanes - 1) / lanes
	blocks := reduceBlocks(n)
	perBlock := (vectors + blocks - 1) / blocks
	partials := make([]float64, blocks)
	var acc [reduceAccumulators][reduceThreads]float64
	var tree [reduceThreads]float64
	for b := range partials {
		lo, hi := min(b*perBlock*lanes, n), min((b+1)*perBlock*lanes, n)
		partials[b] = blockSum(xs[lo:hi], lanes, square, &acc, &tree)
	}
	return finishSum(partials)
}

// blockSum is one block's partial over its run xs: row r of the run's
// vectors (vectors r*reduceThreads to r*reduceThreads + reduceThreads - 1)
// goes to accumulator r % reduceAccumulators of threads 0, 1, .... Each
// product and sum is rounded on its own (the explicit float64
// conversions forbid a fused multiply-add), as the GPU's mul.rn and
// add.rn are.
func blockSum[E float32 | float64 | int32 | int64 | uint8](xs []E, lanes int, square bool,
	acc *[reduceAccumulators][reduceThreads]float64, tree *[reduceThreads]float64) float64 {
	vectors := (len(xs) + lanes - 1) / lanes
	used := min(vectors, reduceThreads)
	for a := range acc {
		clear(acc[a][:used])
	}
	rowLen := reduceThreads * lanes
	for r := 0; r*rowLen < len(xs); r++ {
		row := &acc[r%reduceAccumulators]
		seg := xs[r*rowLen : min((r+1)*rowLen, len(xs))]
		if len(seg) == rowLen {
			// A whole row: element k of every thread's vector, then
			// element k + 1; each thread still adds its elements in
			// order, and the threads' independent sums keep the CPU's
			// adders busy (several times faster than thread by thread).
			for k := range lanes {
				if square {
					for t := range row {
						w := float64(seg[t*lanes+k])
						row[t] = float64(row[t] + float64(w*w))
					}
				} else {
					for t := range row {
						row[t] = float64(row[t] + float64(seg[t*lanes+k]))
					}
				}
			}
			continue
		}
		for t := 0; t*lanes < len(seg); t++ {
			s := row[t]
			if square {
				for _, v := range seg[t*lanes : min(t*lanes+lanes, len(seg))] {
					w := float64(v)
					s = float64(s + float64(w*w))
				}
			} else {
				for _, v := range seg[t*lanes : min(t*lanes+lanes, len(seg))] {
					s = float64(s + float64(v))
				}
			}
			row[t] = s
		}
	}
	for t := range used {
		s := acc[0][t]
		for a := 1; a < reduceAccumulators; a++ {
			s = float64(s + acc[a][t])
		}
		tree[t] = s
	}
	return treeSum(tree[:], used)
}

// finishSum adds the blocks' partials as reduce.cu's finishing kernel
// does: thread t of reduceFinishThreads adds partials t, t +
// reduceFinishThreads, ... in order, then the threads combine in a tree.
func finishSum(partials []float64) float64 {
	var f [reduceFinishThreads]float64
	for i, p := range partials {
		f[i%reduceFinishThreads] += p
	}
	return treeSum(f[:], min(len(partials), reduceFinishThreads))
}

// treeSum is the shared-memory tree of a block of len(s) threads, a power
// of two: thread t adds t + w for w = len(s)/2, ..., 1; it overwrites s.
// Only the first used threads hold a value: the others hold 0 on the GPU,
// and adding 0 changes no sum here (none is -0: every accumulator starts
// at +0, and only -0 + -0 rounds to -0), so the tree starts at the
// smallest width that holds them.
func treeSum(s []float64, used int) float64 {
	w := 1
	for w < used {
		w *= 2
	}
	for i := used; i < w; i++ {
		s[i] = 0
	}
	for w /= 2; w > 0; w /= 2 {
		for t := range w {
			s[t] += s[t+w]
		}
	}
	return s[0]
}

// MaxAbsDiff is the largest |x[i] - y[i]|: NaN if either holds a NaN, and 0
// where the values are equal, infinities included. Integers differ
// exactly: the largest difference, up to 2^64 - 1, is rounded to float64
// once.
func MaxAbsDiff(dt device.DType, x, y []byte) float64 {
	same("MaxAbsDiff", dt, x, y)
	var d maxDiff
	switch dt {
	case device.Float64:
		xs, _ := view[float64](x)
		ys, _ := view[float64](y)
		for i, a := range xs {
			d.add(a, ys[i])
		}
	case device.Float32:
		xs, _ := view[float32](x)
		ys, _ := view[float32](y)
		for i, a := range xs {
			d.add(float64(a), float64(ys[i]))
		}
	case device.Float16, device.BFloat16:
		xs, _ := view[uint16](x)
		ys, _ := view[uint16](y)
		load, _ := halfCodec(dt)
		for i, a := range xs {
			d.add(float64(load(a)), float64(load(ys[i])))
		}
	case device.Int32:
		return maxAbsDiffInts[int32](x, y)
	case device.Int64:
		return maxAbsDiffInts[int64](x, y)
	case device.Uint8:
		return maxAbsDiffInts[uint8](x, y)
	}
	if d.nan {
		return math.NaN()
	}
	return d.worst
}

// maxAbsDiffInts is MaxAbsDiff of integer elements, each difference
// taken in uint64, where it always fits.
func maxAbsDiffInts[S intCompute](x, y []byte) float64 {
	xs, _ := view[S](x)
	ys, _ := view[S](y)
	ys = ys[:len(xs)]
	var worst uint64
	for i, a := range xs {
		worst = max(worst, absDiff(int64(a), int64(ys[i])))
	}
	return float64(worst)
}

// absDiff is |a - b| exactly: the difference of two int64s wraps in
// uint64 to its true value, which is below 2^64.
func absDiff(a, b int64) uint64 {
	if a >= b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}

// maxDiff tracks NaN apart from the maximum because a comparison with NaN is
// false and would drop it (as fmax does on the GPU).
type maxDiff struct {
	worst float64
	nan   bool
}

func (m *maxDiff) add(a, b float64) {
	if a == b {
		return
	}
	d := math.Abs(a - b)
	if d != d {
		m.nan = true
	} else if d > m.worst {
		m.worst = d
	}
}
