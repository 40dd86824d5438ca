package npy

import (
	"bytes"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
)

// FuzzReadHeader feeds the header reader arbitrary bytes: it returns a
// header or an error, never panics, takes time and memory bounded by the
// header's length, returns at most device.MaxDims dimensions, and a header
// it returns encodes and reads back the same.
func FuzzReadHeader(f *testing.F) {
	for _, h := range []Header{
		{DType: device.Float32, Shape: []int{2, 3}},
		{DType: device.Int64, Shape: []int{}},
		{DType: device.Float16, Shape: []int{0, 5}, BigEndian: true},
	} {
		enc, _ := h.Encode()
		f.Add(enc)
	}
	f.Add(rawHeader(2, "{'descr': [('a', '<f4')], 'fortran_order': True, 'shape': (1L,), }"))
	f.Add(rawHeader(3, `{"descr": "|O", "fortran_order": False, "shape": ((),)}`))
	f.Add(rawHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Repeat("1,", 65)+"), }"))
	f.Add(rawHeader(2, "{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Repeat("(", 5000)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		start := time.Now()
		h, offset, err := ReadHeader(bytes.NewReader(data))
		took := time.Since(start)
		goruntime.ReadMemStats(&after)
		if took > 2*time.Second {
			t.Fatalf("reading a %d-byte header took %v", len(data), took)
		}
		// A header is read up to maxHeaderBytes: what it allocates is
		// bounded by that, however its text nests or repeats.
		if n := after.TotalAlloc - before.TotalAlloc; n > 64*uint64(min(len(data), maxHeaderBytes))+1<<20 {
			t.Fatalf("reading a %d-byte header allocated %d bytes", len(data), n)
		}
		if err != nil {
			return
		}
		if len(h.Shape) > device.MaxDims {
			t.Fatalf("a header of %d dimensions was read", len(h.Shape))
		}
		if offset > int64(len(data)) || !h.DType.Valid() || h.Size() < 0 {
			t.Fatalf("header %+v at offset %d of %d bytes", h, offset, len(data))
		}
		enc, err := h.Encode()
		if err != nil {
			t.Fatalf("header %+v read but not written: %v", h, err)
		}
		back, _, err := ReadHeader(bytes.NewReader(enc))
		if err != nil || back.DType != h.DType || back.BigEndian != h.BigEndian || !slices.Equal(back.Shape, h.Shape) {
			t.Fatalf("header %+v wrote %q, read back %+v, %v", h, enc, back, err)
		}
	})
}
