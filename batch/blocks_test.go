package batch

import "testing"

// A product overwriting dC up to an element must wait for every piece of
// the previous tile that holds an element before it, and only those:
// blocks of rows where B's panels are whole, pieces of columns (each
// tm×tq apart in dC) where they are in pieces.
func TestPiecesBeforeGoByElements(t *testing.T) {
	rows := &tiler{p: plan{m: 200, n: 20, k: 8, tm: 100, tn: 10, tk: 8, tq: 10, size: 4}, block: 25}
	cols := &tiler{p: plan{m: 200, n: 10, k: 8, tm: 100, tn: 10, tk: 8, tq: 4, size: 4}}
	for _, c := range []struct {
		t                     *tiler
		end, rows, cols, want int
	}{
		{t: rows, end: 1, rows: 100, cols: 10, want: 1},
		{t: rows, end: 250, rows: 100, cols: 10, want: 1},     // block 0 is elements 0..249
		{t: rows, end: 251, rows: 100, cols: 10, want: 2},     // one element into block 1
		{t: rows, end: 25 * 20, rows: 100, cols: 10, want: 2}, // a wider tile's first block spans two
		{t: rows, end: 10000, rows: 100, cols: 10, want: 4},   // past the tile: all of it
		{t: rows, end: 1000, rows: 60, cols: 10, want: 3},     // a short tile has three blocks
		{t: &tiler{p: rows.p, block: 8}, end: 40, rows: 8, cols: 5, want: 1},
		{t: cols, end: 1, rows: 100, cols: 10, want: 1}, // pieces 0..399, 400..799, 800..999
		{t: cols, end: 400 + 100*4, rows: 100, cols: 10, want: 2},
		{t: cols, end: 400 + 60*4, rows: 60, cols: 10, want: 2}, // a short tile's pieces lie as a tall one's
		{t: cols, end: 800 + 1, rows: 60, cols: 10, want: 3},
	} {
		tile := c.t.tilePieces(c.rows, c.cols)
		if got := piecesBefore(tile, c.end); got != c.want {
			t.Errorf("piecesBefore(%v, %d) = %d, want %d", tile, c.end, got, c.want)
		}
	}
	if got := cols.tilePieces(60, 10); len(got) != 3 || got[2] != (piece{off: 800, rows: 60, c0: 8, cols: 2}) {
		t.Errorf("a 60x10 tile in pieces of 4 columns lies as %v", got)
	}
}
