package batch

// SplitEveryTile makes every tile of C come down in blocks of rows, however
// small, until the returned function restores the size from which it does.
func SplitEveryTile() (restore func()) {
	old := splitMin
	splitMin = 0
	return func() { splitMin = old }
}

// PanelsInPieces makes whole-row plans split B's panels into q pieces,
// however narrow, until the returned function restores the choice.
func PanelsInPieces(q int) (restore func()) {
	oldQ, oldCols := onlyPieces, minPieceCols
	onlyPieces, minPieceCols = q, 1
	return func() { onlyPieces, minPieceCols = oldQ, oldCols }
}
