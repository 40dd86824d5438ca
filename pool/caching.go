package pool

// granularity is the unit every block size is rounded up to: the driver
// aligns allocations to 256 bytes, and 512 keeps the number of distinct
// sizes (and tree entries) down at a cost of at most 511 bytes a block.
const granularity = 512

func roundUp(n, unit uint64) uint64 { return (n + unit - 1) / unit * unit }

// chunk is a piece of a segment.
type chunk struct{}

func newCaching(c *core) allocator { return newNone(c) }
