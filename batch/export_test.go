package batch

// SplitEveryTile makes every tile of C come down in blocks of rows, however
// small, until the returned function restores the size from which it does.
func SplitEveryTile() (restore func()) {
	old := splitMin
	splitMin = 0
	return func() { splitMin = old }
}
