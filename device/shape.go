package device

import "fmt"

// MaxDims is the most dimensions an array may have: NumPy 2's limit, so
// that every .npy NumPy writes loads, and a hostile shape (a header of
// 300,000 dimensions of size 1) is refused before anything walks it.
const MaxDims = 64

// CheckDims refuses a shape of more than MaxDims dimensions, in NumPy's
// words.
func CheckDims(ndim int) error {
	if ndim > MaxDims {
		return fmt.Errorf("maximum supported dimension for an array is %d, found %d", MaxDims, ndim)
	}
	return nil
}
