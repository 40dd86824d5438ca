package runtime

import (
	"errors"
	"fmt"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

// The overlap rule is NumPy's: a kernel whose output shares memory with an
// input behaves as if every input were read before any output is written.
// A view is a contiguous range of one buffer, and a buffer's views all
// have its dtype, so two arrays share memory only when they view one
// buffer and their byte ranges meet; then either
//
//   - they are the same range (kernels.add(x, x), an input that is the
//     output itself): every kernel reads an element before it stores the
//     result in the same place, so the call runs in place at no cost (a
//     copy onto itself does nothing); or
//   - the ranges meet in part (NumPy's a[1:] += a[:-1]): a kernel would
//     read elements it has already written, in an order that differs
//     between the backends and between runs on the GPU. The kernel then
//     writes into a temporary array instead, reading every input where it
//     is, and the temporary is copied into the output afterwards. One
//     temporary of the output's size serves any number of overlapping
//     inputs, and an output smaller than its inputs (a reduction along an
//     axis) needs less than a copy of them would.
//
// The temporary comes from the pool as an array does, so the limits, the
// out-of-memory ladder, stream order and graph capture apply to it; it is
// freed as soon as its copy is queued. Where it cannot be had, the call
// is an error that says so, and no array has been touched. Calls on
// arrays of different buffers pay one pointer comparison, and views of
// one buffer a few more: nothing is allocated and nothing waits.

// partlyOverlaps reports whether in shares some of out's memory without
// being exactly out's elements. Small enough to inline: arrays of two
// buffers, the usual case, cost one comparison.
func partlyOverlaps(out, in *Array) bool {
	return out.buf == in.buf && partlyOverlapsInBuffer(out, in)
}

// partlyOverlapsInBuffer is partlyOverlaps for two arrays of one buffer.
func partlyOverlapsInBuffer(out, in *Array) bool {
	return !sameMemory(out, in) && overlaps(out, in)
}

// sameMemory reports whether a and b are the same elements of one buffer.
func sameMemory(a, b *Array) bool {
	return a.buf == b.buf && a.offset == b.offset && a.size == b.size && a.dtype == b.dtype
}

// overlapping is the index of the first array among args that partly
// overlaps out, or -1.
func overlapping(out *Array, args []any) int {
	for i, a := range args {
		if arr, ok := a.(*Array); ok && partlyOverlaps(out, arr) {
			return i
		}
	}
	return -1
}

// throughTemporary writes out through a temporary array of its shape and
// dtype, because the input in (called inName; out is outName) partly
// overlaps it: write fills the temporary, reading the inputs where they
// are, and the temporary is then copied into out.
func (rt *Runtime) throughTemporary(out *Array, outName string, in *Array, inName string, write func(tmp *Array) error) error {
	tmp, err := rt.DeviceArray(out.shape, out.dtype)
	if err != nil {
		what := "cannot be had"
		if errors.Is(err, device.ErrOutOfMemory) {
			what = "does not fit"
		}
		return fmt.Errorf("%s; reading %s before %s is written needs a temporary array of %s, which %s, so no array was changed: %w",
			describeOverlap(out, outName, in, inName), inName, outName, config.FormatSize(out.NBytes()), what, err)
	}
	rt.kernels.overlaps.count(tmp.NBytes())
	err = write(tmp)
	if err == nil {
		err = rt.copyDevice(out, tmp)
	}
	if ferr := tmp.Free(); err == nil {
		err = ferr
	}
	return err
}

// describeOverlap says where in meets out, in in's elements.
func describeOverlap(out *Array, outName string, in *Array, inName string) string {
	size := uint64(in.dtype.Size())
	inEnd, outEnd := in.offset+in.NBytes(), out.offset+out.NBytes()
	shared := plural(int((min(inEnd, outEnd)-max(in.offset, out.offset))/size), "element", "elements")
	var where string
	switch {
	case in.offset < out.offset:
		where = fmt.Sprintf("%s starts %s before %s", inName, plural(int((out.offset-in.offset)/size), "element", "elements"), outName)
	case in.offset > out.offset:
		where = fmt.Sprintf("%s starts %s after %s", inName, plural(int((in.offset-out.offset)/size), "element", "elements"), outName)
	default:
		where = fmt.Sprintf("%s and %s start at the same element", inName, outName)
	}
	return fmt.Sprintf("%s (shape %s) partly overlaps %s (shape %s): %s, and they share %s",
		inName, shapeString(in.shape), outName, shapeString(out.shape), where, shared)
}

// OverlapTemporaries is how many temporary arrays this runtime took from
// the pool because a call's output partly overlapped one of its inputs,
// and their bytes in all. Calls whose arrays are the same memory, or
// share none, take none.
func (rt *Runtime) OverlapTemporaries() (n, nbytes uint64) {
	return rt.kernels.overlaps.temporaries()
}
