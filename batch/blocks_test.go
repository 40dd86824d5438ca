package batch

import "testing"

// A product overwriting dC up to an element must wait for every block of
// the previous tile that holds an element before it, and only those.
func TestBlocksBeforeGoesByElements(t *testing.T) {
	for _, c := range []struct{ end, rows, cols, block, want int }{
		{end: 1, rows: 100, cols: 10, block: 25, want: 1},
		{end: 250, rows: 100, cols: 10, block: 25, want: 1},     // block 0 is elements 0..249
		{end: 251, rows: 100, cols: 10, block: 25, want: 2},     // one element into block 1
		{end: 25 * 20, rows: 100, cols: 10, block: 25, want: 2}, // a wider tile's first block spans two
		{end: 10000, rows: 100, cols: 10, block: 25, want: 4},   // past the tile: all of it
		{end: 1000, rows: 60, cols: 10, block: 25, want: 3},     // a short tile has three blocks
		{end: 40, rows: 8, cols: 5, block: 8, want: 1},          // one block
	} {
		if got := blocksBefore(c.end, c.rows, c.cols, c.block); got != c.want {
			t.Errorf("blocksBefore(%d, %d, %d, %d) = %d, want %d", c.end, c.rows, c.cols, c.block, got, c.want)
		}
	}
}
