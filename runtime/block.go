package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// BlockCopier is implemented by backends that upload a block of a
// row-major host matrix (height rows of width bytes, pitch bytes apart)
// into contiguous device memory asynchronously, from pinned memory.
type BlockCopier interface {
	UploadBlockAsync(dst device.Ptr, src []byte, pitch, width, height int, s device.Stream) error
}

// CopyFromBlockAsync queues on stream s (nil: the runtime's stream) a copy
// into a, an r×c matrix, of the r×c block of the pinned matrix src whose
// first element is row i, column j (1-based), and returns at once: a
// column panel of a matrix page-locked where it lies goes up without a
// copy on the host. src must not change until s has passed this point.
func (a *Array) CopyFromBlockAsync(src *HostArray, i, j int, s *Stream) error {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return err
	}
	if err := rt.uncapturable("a copy between host and device"); err != nil {
		return err
	}
	if src == nil {
		return fmt.Errorf("source is nil")
	}
	if a.NDim() != 2 || src.NDim() != 2 {
		return fmt.Errorf("a block copy needs matrices, got a %s source into a %s array", shapeString(src.shape), shapeString(a.shape))
	}
	if a.dtype != src.dtype {
		return fmt.Errorf("source is %s, array is %s", src.dtype, a.dtype)
	}
	r, c, rows, cols := a.shape[0], a.shape[1], src.shape[0], src.shape[1]
	if i < 1 || j < 1 || i+r-1 > rows || j+c-1 > cols {
		return fmt.Errorf("a %dx%d block from row %d, column %d is outside the %dx%d source", r, c, i, j, rows, cols)
	}
	if !src.pinned {
		return errNotPinned
	}
	bc, ok := rt.backend.(BlockCopier)
	if !ok {
		return fmt.Errorf("the %s backend has no block copies", rt.backend.Name())
	}
	if r == 0 || c == 0 {
		return nil
	}
	h, err := rt.streamHandle(s)
	if err != nil {
		return err
	}
	size := a.dtype.Size()
	pitch, width := cols*size, c*size
	first := ((i-1)*cols + j - 1) * size
	rt.pool.RecordStream(&a.buf.blk, h)
	rt.xfer.asyncCopies++
	return bc.UploadBlockAsync(a.ptr(), src.data[first:first+(r-1)*pitch+width], pitch, width, r, h)
}
