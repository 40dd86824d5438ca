package kernels

import "github.com/gluaproject/glua/device"

// Unmix64 lets the GPU tests choose the hash an element gets.
var Unmix64 = unmix64

// The GPU tests draw integers and numbers as the reference's tests do.
var (
	NearIntLimits = nearIntLimits
	IntScalars    = intScalars
	IntAt         = intAt
)

// The GPU tests place sizes around a row of a block's threads, a block's
// share and the largest grid.
const (
	ReduceThreads   = reduceThreads
	ReducePerBlock  = reducePerBlock
	ReduceMaxBlocks = reduceMaxBlocks
)

// QueueSum queues a float sum's two kernels without reading the result,
// which it leaves in scratch: the kernels' own device time, with no
// host round trip between calls.
func (g *GPU) QueueSum(dt device.DType, x device.Ptr, n int, scratch device.Ptr, s device.Stream) error {
	return g.queueReduce("Sum", "glua_sum_", "glua_finish_sum", dt, n, scratch, scratch+device.Ptr(8*reduceBlocks(n)), s, []device.Ptr{x}, int32(0))
}

// Residency is the shared memory and carveout op launches with over
// 16-byte vectors on g's device.
func (g *GPU) Residency(op *ElementwiseOp) (shared uint32, carveout int) { return g.residency(op) }
