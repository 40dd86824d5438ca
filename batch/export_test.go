package batch

import "github.com/gluaproject/glua/runtime"

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

// TraceSteps has f called on either side of each product, upload and
// download the tiler queues, until the returned function stops it.
func TraceSteps(f func(what string, s *runtime.Stream, before bool)) (restore func()) {
	old := traceStep
	traceStep = f
	return func() { traceStep = old }
}
