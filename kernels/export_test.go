package kernels

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
