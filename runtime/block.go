package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/device"
)

// BlockCopier is implemented by backends that copy a block of a
// row-major host matrix (height rows of width bytes, pitch bytes apart)
// to and from contiguous device memory asynchronously, in pinned memory.
type BlockCopier interface {
	UploadBlockAsync(dst device.Ptr, src []byte, pitch, width, height int, s device.Stream) error
	DownloadBlockAsync(dst []byte, pitch, width, height int, src device.Ptr, s device.Stream) error
}

// CopyFromBlockAsync queues on stream s (nil: the runtime's stream) a copy
// into a, an r×c matrix, of the r×c block of the pinned matrix src whose
// first element is row i, column j (1-based), and returns at once: a
// column panel of a matrix page-locked where it lies goes up without a
// copy on the host. src must not change until s has passed this point.
func (a *Array) CopyFromBlockAsync(src *HostArray, i, j int, s *Stream) error {
	return a.copyBlock("source", src, i, j, s, func(bc BlockCopier, block []byte, pitch, width, height int, h device.Stream) error {
		return bc.UploadBlockAsync(a.ptr(), block, pitch, width, height, h)
	})
}

// CopyToBlockAsync is CopyFromBlockAsync's reverse: a, an r×c matrix,
// into the r×c block of the pinned matrix dst whose first element is row
// i, column j (1-based). dst must not be read until s has passed this
// point.
func (a *Array) CopyToBlockAsync(dst *HostArray, i, j int, s *Stream) error {
	return a.copyBlock("destination", dst, i, j, s, func(bc BlockCopier, block []byte, pitch, width, height int, h device.Stream) error {
		return bc.DownloadBlockAsync(block, pitch, width, height, a.ptr(), h)
	})
}

// copyBlock checks a block copy between a and the block of host (what
// names it) from row i, column j, and queues it with do.
func (a *Array) copyBlock(what string, host *HostArray, i, j int, s *Stream, do func(BlockCopier, []byte, int, int, int, device.Stream) error) error {
	rt := a.Runtime()
	if err := a.live(rt, ""); err != nil {
		return err
	}
	if err := rt.uncapturable("a copy between host and device"); err != nil {
		return err
	}
	if host == nil {
		return fmt.Errorf("%s is nil", what)
	}
	if a.NDim() != 2 || host.NDim() != 2 {
		return fmt.Errorf("a block copy needs matrices, got a %s %s and a %s array", shapeString(host.shape), what, shapeString(a.shape))
	}
	if a.dtype != host.dtype {
		return fmt.Errorf("%s is %s, array is %s", what, host.dtype, a.dtype)
	}
	r, c, rows, cols := a.shape[0], a.shape[1], host.shape[0], host.shape[1]
	if i < 1 || j < 1 || i+r-1 > rows || j+c-1 > cols {
		return fmt.Errorf("a %dx%d block from row %d, column %d is outside the %dx%d %s", r, c, i, j, rows, cols, what)
	}
	if !host.pinned {
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
	return do(bc, host.data[first:first+(r-1)*pitch+width], pitch, width, r, h)
}
