package kernels

import (
	"fmt"
	"strings"
	"testing"
)

// A grid from ElementwiseShape has a whole number of blocks of
// ElementwiseThreads and, being one-shot, covers every vector (or every
// element, unaligned) in one round; no grid is empty or past CUDA's
// limit.
func TestElementwiseShapeCoversEveryUnitInOneRound(t *testing.T) {
	for _, sms := range []int{0, 1, 132, 144} {
		for _, n := range []int{0, 1, 127, 128, 1023, 1024, 1025, 1 << 28, 1<<31 - 1, 1 << 40} {
			for _, c := range []struct {
				size      int
				vec       bool
				units, on int // units of work, and how many a thread takes
			}{
				{4, true, n / 4, VectorsPerThread}, {1, true, n / 16, VectorsPerThread},
				{8, true, n / 2, VectorsPerThread}, {2, false, n, ElementsPerThread},
			} {
				grid, block := ElementwiseShape(sms, n, c.size, c.vec)
				if block != [3]uint32{ElementwiseThreads, 1, 1} || grid[1] != 1 || grid[2] != 1 {
					t.Fatalf("%d SMs, %d elements: grid %v, block %v", sms, n, grid, block)
				}
				if grid[0] < 1 || grid[0] > maxGridX {
					t.Errorf("%d SMs, %d elements of %d bytes: %d blocks", sms, n, c.size, grid[0])
				}
				round := ElementwiseThreads * c.on
				covered := int(grid[0]) * round
				oneShot := elementwiseBlocksPerSM == 0 && c.units <= maxGridX*round
				if oneShot && (covered < c.units || covered-c.units >= round && c.units > 0) {
					t.Errorf("%d SMs, %d elements of %d bytes (vectors %v): %d blocks cover %d units of %d",
						sms, n, c.size, c.vec, grid[0], covered, c.units)
				}
			}
		}
	}
}

// The 32-bit loops of dtypes.cu never wrap: at index32's largest count
// (0x7fff0000 elements, one a unit), a round's last unit and the next
// round's first, from the largest first unit below the count, stay below
// 2^32, on any grid ElementwiseShape launches.
func TestElementwise32BitIndicesDoNotWrapAtTheirLargestArray(t *testing.T) {
	src, _, err := cudaSource("elementwise")
	if err != nil {
		t.Fatal(err)
	}
	const largest = 0x7fff0000
	if !strings.Contains(src, fmt.Sprintf("return n <= %#xLL;", largest)) {
		t.Fatalf("index32's bound is not %#x", largest)
	}
	for _, sms := range []int{0, 132} {
		grid, block := ElementwiseShape(sms, largest, 1, false)
		step := uint64(grid[0]) * uint64(block[0]) * ElementsPerThread
		lastFirst := uint64(largest - 1) // a first unit is below the count
		if lastFirst+step >= 1<<32 || lastFirst+uint64(ElementsPerThread-1)*uint64(block[0]) >= 1<<32 {
			t.Errorf("%d SMs: the step %d from unit %d wraps 32 bits", sms, step, lastFirst)
		}
	}
}

// The built-in modules read the units per thread the Go launch shape
// assumes.
func TestElementwiseSourceDefinesUnitsPerThread(t *testing.T) {
	want := fmt.Sprintf("#define GLUA_VECTORS_PER_THREAD %d\n#define GLUA_ELEMENTS_PER_THREAD %d\n", VectorsPerThread, ElementsPerThread)
	if !strings.HasPrefix(DtypesSource(), want) {
		t.Errorf("dtypes.cu does not start with %q", want)
	}
}

// TestElementwiseResidencyIsSetWhereItWasMeasured: on the 9.0 devices a
// kernel reading two arrays or more reserves shared memory and prefers a
// carveout; one reading a single array, and every kernel elsewhere,
// launches as a kernel without shared memory does.
func TestElementwiseResidencyIsSetWhereItWasMeasured(t *testing.T) {
	for _, c := range []struct {
		cc       [2]int
		inputs   int
		shared   uint32
		carveout int
	}{
		{[2]int{9, 0}, 2, 16 << 10, 50},
		{[2]int{9, 0}, 5, 16 << 10, 50},
		{[2]int{9, 0}, 1, 0, 0},
		{[2]int{9, 0}, 0, 0, 0},
		{[2]int{8, 0}, 2, 0, 0},
		{[2]int{8, 9}, 2, 0, 0},
		{[2]int{10, 0}, 2, 0, 0},
		{[2]int{0, 0}, 2, 0, 0},
	} {
		shared, carveout := ElementwiseResidency(c.cc, c.inputs)
		if shared != c.shared || carveout != c.carveout {
			t.Errorf("compute capability %d.%d, %d inputs: %d bytes, carveout %d%%; want %d, %d%%", c.cc[0], c.cc[1], c.inputs, shared, carveout, c.shared, c.carveout)
		}
	}
}
