package device

import "fmt"

// Limits is what a device accepts in one kernel launch. The cuda backend
// reads them from the driver's device attributes; the CPU backend takes
// those of the GPU glua would use when one is present, else
// DataCentreLimits, and refuses what that GPU would refuse, so that a
// script the CPU backend accepts launches on the card too.
//
// CheckLaunch and CheckStaticShared hold the rule and the messages for
// every backend: a launch is refused with the same text on each.
type Limits struct {
	// Device names the GPU the limits are those of, for --info.
	Device string
	// ThreadsPerBlock is CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK.
	ThreadsPerBlock int
	// Block and Grid are the largest block and grid in x, y and z
	// (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X... and MAX_GRID_DIM_X...).
	Block, Grid [3]int
	// SharedPerBlock is the static shared memory one block may declare
	// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 48 KiB on every
	// GPU glua supports); SharedPerBlockOptin is the most a block may
	// have, static and dynamic together, once a kernel opts in
	// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).
	SharedPerBlock, SharedPerBlockOptin int
	// WarpSize is CU_DEVICE_ATTRIBUTE_WARP_SIZE.
	WarpSize int
	// RegistersPerBlock is CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK.
	// Only the cuda backend knows a kernel's register use, so only it
	// refuses a block that needs more.
	RegistersPerBlock int
}

// DataCentreLimits are those of an NVIDIA H100 (compute capability 9.0),
// which the CPU backend applies when no GPU is present.
func DataCentreLimits() Limits {
	return Limits{
		Device:              "NVIDIA H100 (built in)",
		ThreadsPerBlock:     1024,
		Block:               [3]int{1024, 1024, 64},
		Grid:                [3]int{1<<31 - 1, 65535, 65535},
		SharedPerBlock:      48 << 10,
		SharedPerBlockOptin: 227 << 10,
		WarpSize:            32,
		RegistersPerBlock:   64 << 10,
	}
}

// CheckLaunch refuses a grid, block and bytes of dynamic shared memory the
// device would refuse for a kernel with staticShared bytes of __shared__
// arrays, naming the limit and the device attribute that sets it.
func (l Limits) CheckLaunch(grid, block [3]uint32, dynamicShared uint32, staticShared int) error {
	const axes = "xyz"
	for i := range 3 {
		if block[i] == 0 || grid[i] == 0 {
			return fmt.Errorf("grid %v and block %v must be at least 1 in every dimension", grid, block)
		}
		if int64(block[i]) > int64(l.Block[i]) {
			return fmt.Errorf("block.%c = %d exceeds the device's limit of %d (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_%c)",
				axes[i], block[i], l.Block[i], axes[i]-'a'+'A')
		}
		if int64(grid[i]) > int64(l.Grid[i]) {
			return fmt.Errorf("grid.%c = %d exceeds the device's limit of %d (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_%c)",
				axes[i], grid[i], l.Grid[i], axes[i]-'a'+'A')
		}
	}
	threads := uint64(block[0]) * uint64(block[1]) * uint64(block[2])
	if threads > uint64(l.ThreadsPerBlock) {
		return fmt.Errorf("a block of %d×%d×%d = %d threads exceeds the device's limit of %d threads per block (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
			block[0], block[1], block[2], threads, l.ThreadsPerBlock)
	}
	if int64(dynamicShared)+int64(staticShared) > int64(l.SharedPerBlockOptin) {
		return fmt.Errorf("%d bytes of dynamic shared memory plus %d static exceed the device's limit of %d bytes per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)",
			dynamicShared, staticShared, l.SharedPerBlockOptin)
	}
	return nil
}

// CheckStaticShared refuses __shared__ arrays of nbytes in all that no
// kernel may declare on the device: the compiler rejects static shared
// memory past SharedPerBlock, opt-in or not (only dynamic shared memory
// can go beyond it).
func (l Limits) CheckStaticShared(nbytes int) error {
	if nbytes > l.SharedPerBlock {
		return fmt.Errorf("%d bytes of shared arrays exceed the device's limit of %d bytes of static shared memory per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)",
			nbytes, l.SharedPerBlock)
	}
	return nil
}
