package npy

import (
	"bytes"
	"slices"
	"testing"

	"github.com/gluaproject/glua/device"
)

// FuzzReadHeader feeds the header reader arbitrary bytes: it returns a
// header or an error, never panics, and a header it returns encodes and
// reads back the same.
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
	f.Fuzz(func(t *testing.T, data []byte) {
		h, offset, err := ReadHeader(bytes.NewReader(data))
		if err != nil {
			return
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
