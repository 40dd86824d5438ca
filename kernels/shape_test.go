package kernels

import (
	"fmt"
	"strings"
	"testing"
)

// A grid from ElementwiseShape has a whole number of blocks of
// ElementwiseThreads and, being one-shot, covers every unit in one round;
// no grid is empty or past CUDA's limit.
func TestElementwiseShapeCoversEveryUnitInOneRound(t *testing.T) {
	for _, sms := range []int{0, 1, 132, 144} {
		for _, units := range []int{0, 1, 127, 128, 511, 512, 513, 1 << 26, 1<<31 - 1, 1 << 40} {
			grid, block := ElementwiseShape(sms, units)
			if block != [3]uint32{ElementwiseThreads, 1, 1} || grid[1] != 1 || grid[2] != 1 {
				t.Fatalf("%d SMs, %d units: grid %v, block %v", sms, units, grid, block)
			}
			if grid[0] < 1 || grid[0] > maxGridX {
				t.Errorf("%d SMs, %d units: %d blocks", sms, units, grid[0])
			}
			covered := int(grid[0]) * ElementwiseThreads * UnitsPerThread
			oneShot := elementwiseBlocksPerSM == 0 && units <= maxGridX*ElementwiseThreads*UnitsPerThread
			if oneShot && (covered < units || covered-units >= ElementwiseThreads*UnitsPerThread && units > 0) {
				t.Errorf("%d SMs, %d units: %d blocks cover %d units", sms, units, grid[0], covered)
			}
		}
	}
}

// Units are 16-byte vectors where every pointer allows them, elements
// otherwise; the tail of fewer than a vector's elements is no unit.
func TestElementwiseUnitsAreVectorsOrElements(t *testing.T) {
	for _, c := range []struct{ n, size, want int }{
		{1024, 4, 256}, {1027, 4, 256}, {3, 4, 0}, {17, 1, 1}, {9, 8, 4}, {1000, 2, 125},
	} {
		if got := ElementwiseUnits(c.n, c.size, true); got != c.want {
			t.Errorf("%d elements of %d bytes: %d vectors, want %d", c.n, c.size, got, c.want)
		}
		if got := ElementwiseUnits(c.n, c.size, false); got != c.n {
			t.Errorf("%d elements of %d bytes unaligned: %d units, want %d", c.n, c.size, got, c.n)
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
		grid, block := ElementwiseShape(sms, largest)
		step := uint64(grid[0]) * uint64(block[0]) * UnitsPerThread
		lastFirst := uint64(largest - 1) // a first unit is below the count
		if lastFirst+step >= 1<<32 || lastFirst+uint64(UnitsPerThread-1)*uint64(block[0]) >= 1<<32 {
			t.Errorf("%d SMs: the step %d from unit %d wraps 32 bits", sms, step, lastFirst)
		}
	}
}

// The built-in modules read the units per thread the Go launch shape
// assumes.
func TestElementwiseSourceDefinesUnitsPerThread(t *testing.T) {
	want := fmt.Sprintf("#define GLUA_UNITS_PER_THREAD %d\n", UnitsPerThread)
	if !strings.HasPrefix(DtypesSource(), want) {
		t.Errorf("dtypes.cu does not start with %q", want)
	}
}
