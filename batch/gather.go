package batch

// gather copies rows r0..r0+nr-1, columns c0..c0+nc-1 of a row-major
// matrix of width columns (src) into dst, packed; whole rows are one
// contiguous copy, and either way the rows are shared among threads.
func gather(dst, src []byte, size, r0, nr, c0, nc, width int) error {
	if nc == width {
		return parallelCopy(dst[:nr*nc*size], src[r0*width*size:(r0+nr)*width*size])
	}
	return parallelRows(nr, nc*size, func(r int) {
		from := ((r0+r)*width + c0) * size
		copy(dst[r*nc*size:(r+1)*nc*size], src[from:from+nc*size])
	})
}

// scatter is gather's reverse: packed src into rows and columns of dst.
func scatter(dst, src []byte, size, r0, nr, c0, nc, width int) error {
	if nc == width {
		return parallelCopy(dst[r0*width*size:(r0+nr)*width*size], src[:nr*nc*size])
	}
	return parallelRows(nr, nc*size, func(r int) {
		to := ((r0+r)*width + c0) * size
		copy(dst[to:to+nc*size], src[r*nc*size:(r+1)*nc*size])
	})
}
