package npy

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
)

// rawHeader is an .npy file's start with the given version and header
// text, its length field of the version's width.
func rawHeader(major byte, text string) []byte {
	b := append([]byte(magic), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(text)))
	}
	return append(b, text...)
}

func TestHeaderRoundTripsEveryDTypeAndShape(t *testing.T) {
	shapes := [][]int{{}, {1}, {5}, {0}, {2, 3}, {0, 4}, {3, 0, 2}, {2, 3, 4, 5, 6}}
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.Int32, device.Int64, device.Uint8} {
		for _, shape := range shapes {
			for _, big := range []bool{false, true} {
				h := Header{DType: dt, Shape: shape, BigEndian: big && dt.Size() > 1}
				enc, err := h.Encode()
				if err != nil {
					t.Fatalf("%+v: %v", h, err)
				}
				got, offset, err := ReadHeader(bytes.NewReader(enc))
				if err != nil {
					t.Fatalf("%+v: %v\n%q", h, err, enc)
				}
				if got.DType != h.DType || !slices.Equal(got.Shape, h.Shape) || got.BigEndian != h.BigEndian {
					t.Errorf("encoded %+v, read back %+v", h, got)
				}
				if offset != int64(len(enc)) || offset%64 != 0 || enc[len(enc)-1] != '\n' {
					t.Errorf("%+v: data offset %d of a %d-byte header; want the header's end at a multiple of 64, after a newline", h, offset, len(enc))
				}
			}
		}
	}
}

// The bytes are NumPy's own for np.save of np.zeros((2, 3), "f4"), so
// any reader of the format reads glua's files.
func TestHeaderIsWrittenAsNumPyWritesIt(t *testing.T) {
	enc, err := Header{DType: device.Float32, Shape: []int{2, 3}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	dict := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	want := "\x93NUMPY\x01\x00\x76\x00" + dict + strings.Repeat(" ", 128-10-len(dict)-1) + "\n"
	if string(enc) != want {
		t.Errorf("header\n%q\nwant\n%q", enc, want)
	}
	one, _ := Header{DType: device.Uint8, Shape: []int{7}}.Encode()
	if !bytes.Contains(one, []byte("'descr': '|u1'")) || !bytes.Contains(one, []byte("'shape': (7,)")) {
		t.Errorf("uint8 vector header %q: want descr '|u1' and shape (7,)", one)
	}
}

func TestHeaderLongerThanVersion1AllowsIsVersion2(t *testing.T) {
	shape := make([]int, 30000)
	for i := range shape {
		shape[i] = 1
	}
	enc, err := Header{DType: device.Float64, Shape: shape}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if enc[6] != 2 || (len(enc))%64 != 0 {
		t.Fatalf("a %d-byte header is version %d.%d; want 2.0, aligned", len(enc), enc[6], enc[7])
	}
	// No array glua reads has that many dimensions: the reader refuses it.
	if _, _, err := ReadHeader(bytes.NewReader(enc)); err == nil || !strings.Contains(err.Error(), "found 30000") {
		t.Fatalf("read back 30000 dimensions: %v", err)
	}
}

func TestHeaderVersions2And3AndPython2HeadersAreRead(t *testing.T) {
	for _, c := range []struct {
		name string
		raw  []byte
		want Header
	}{
		{"2.0", rawHeader(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 2), }\n"), Header{DType: device.Int64, Shape: []int{4, 2}}},
		{"3.0", rawHeader(3, "{'descr': '>f2', 'fortran_order': False, 'shape': (3,), }\n"), Header{DType: device.Float16, Shape: []int{3}, BigEndian: true}},
		{"python 2 longs", rawHeader(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 4L), }"), Header{DType: device.Float64, Shape: []int{3, 4}}},
		{"double quotes, any key order", rawHeader(1, `{"shape": (), "fortran_order": False, "descr": "<i4"}`), Header{DType: device.Int32, Shape: []int{}}},
		{"uint8 with a byte order", rawHeader(1, "{'descr': '<u1', 'fortran_order': False, 'shape': (2,)}"), Header{DType: device.Uint8, Shape: []int{2}}},
		// One long dimension is laid out alike in both orders.
		{"fortran vector", rawHeader(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6, 1)}"), Header{DType: device.Float32, Shape: []int{1, 6, 1}}},
	} {
		got, _, err := ReadHeader(bytes.NewReader(c.raw))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.DType != c.want.DType || !slices.Equal(got.Shape, c.want.Shape) || got.BigEndian != c.want.BigEndian {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestMalformedHeadersAreErrorsThatSayWhy(t *testing.T) {
	dict := func(descr, fortran, shape string) []byte {
		return rawHeader(1, "{'descr': "+descr+", 'fortran_order': "+fortran+", 'shape': "+shape+", }\n")
	}
	valid := dict("'<f4'", "False", "(2, 3)")
	for _, c := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"empty", nil, "the file is empty, not an .npy file"},
		{"bad magic", []byte("PK\x03\x04 a zip file"), `not an .npy file: it begins with "PK\x03\x04 a", not NumPy's "\x93NUMPY"`},
		{"truncated magic", []byte("\x93NUM"), "truncated header: the file ends after 4 bytes"},
		{"unknown version", rawHeader(4, "{}"), "unsupported .npy format version 4.0 (glua reads 1.0, 2.0 and 3.0)"},
		{"truncated length", valid[:9], "truncated header: the file ends after 9 bytes, inside the header length"},
		{"header length past the end", valid[:40], "truncated header: it says 60 bytes but the file ends 30 bytes into it"},
		{"absurd header length", append([]byte(magic+"\x02\x00"), 0xff, 0xff, 0xff, 0xff), "header length 4294967295 is more than any .npy header needs (glua reads up to 1048576 bytes): the file is corrupt"},
		{"unterminated dict", rawHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)"), `header is not a Python dict literal (at byte 56: unexpected end, expected ',' or '}'): "{'descr'`},
		{"not a literal", rawHeader(1, "print('hi')"), `header is not a Python dict literal (at byte 0: unexpected "print('hi')")`},
		{"unterminated string", rawHeader(1, "{'descr: 1}"), "unterminated string"},
		{"trailing text", rawHeader(1, "{} {}"), `at byte 3: unexpected "{}" after the end`},
		{"number too large", rawHeader(1, "{'shape': (99999999999999999999,)}"), "integer 99999999999999999999 is too large"},
		{"nested too deep", rawHeader(1, strings.Repeat("(", 100)), "nested more than 32 deep"},
		{"not a dict", rawHeader(1, "[1, 2]"), `header is not a dict: "[1, 2]"`},
		{"missing shape", rawHeader(1, "{'descr': '<f4', 'fortran_order': False}"), "header has no 'shape'"},
		{"extra key", rawHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), "header has keys other than 'descr', 'fortran_order' and 'shape'"},
		{"fortran order", dict("'<f4'", "True", "(2, 3)"), "fortran_order is True: the 2x3 array is stored column-major, and glua reads row-major (C order) only; save np.ascontiguousarray(a) instead"},
		{"fortran_order not a bool", dict("'<f4'", "'no'", "(2, 3)"), "fortran_order is neither True nor False"},
		{"object array", dict("'|O'", "False", "(2,)"), "object arrays (dtype '|O') hold Python objects, not numbers; glua reads arrays of numbers only"},
		{"uint32", dict("'<u4'", "False", "(2,)"), "unsupported dtype '<u4' (uint32); glua reads float32 '<f4', float64 '<f8', float16 '<f2', int32 '<i4', int64 '<i8' and uint8 '|u1'"},
		{"bool", dict("'|b1'", "False", "(2,)"), "unsupported dtype '|b1' (bool)"},
		{"int8", dict("'|i1'", "False", "(2,)"), "unsupported dtype '|i1' (int8)"},
		{"complex", dict("'<c8'", "False", "(2,)"), "unsupported dtype '<c8' (complex64)"},
		{"strings", dict("'<U5'", "False", "(2,)"), "unsupported dtype '<U5' (a string type)"},
		{"datetime", dict("'<M8[ns]'", "False", "(2,)"), "unsupported dtype '<M8[ns]';"},
		{"native order", dict("'=f4'", "False", "(2,)"), "dtype '=f4' does not say whether it is little- or big-endian"},
		{"no byte order", dict("'f4'", "False", "(2,)"), "unsupported dtype 'f4'"},
		{"padded size", dict("'<f04'", "False", "(2,)"), "unsupported dtype '<f04'"},
		{"structured", dict("[('a', '<f4'), ('b', '<i4')]", "False", "(2,)"), "structured arrays (a dtype with fields) are not supported"},
		{"descr not a string", dict("4", "False", "(2,)"), "descr is not a dtype string"},
		{"shape a list", dict("'<f4'", "False", "[2, 3]"), "shape is not a tuple: [2, 3]"},
		{"shape an int", dict("'<f4'", "False", "(2)"), "shape is not a tuple: 2"},
		{"negative dimension", dict("'<f4'", "False", "(2, -1)"), "shape[2] is -1; dimensions are non-negative integers"},
		{"dimension a string", dict("'<f4'", "False", "('2',)"), "shape[1] is '2'; dimensions are non-negative integers"},
		{"too large", dict("'<f4'", "False", "(1099511627776, 1099511627776)"), "shape 1099511627776x1099511627776 is too large"},
	} {
		_, _, err := ReadHeader(bytes.NewReader(c.raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant an error containing %q", c.name, err, c.want)
		}
	}
}

// TestHeadersOfMoreThan64DimensionsAreRefused: a header claiming 300,000
// dimensions of size 1 is refused at once, in NumPy's words, and 64
// dimensions, NumPy 2's limit, still read.
func TestHeadersOfMoreThan64DimensionsAreRefused(t *testing.T) {
	header := func(ndim int) []byte {
		return rawHeader(2, "{'descr': '<f4', 'fortran_order': False, 'shape': ("+strings.Repeat("1, ", ndim)+"), }")
	}
	start := time.Now()
	_, _, err := ReadHeader(bytes.NewReader(header(300000)))
	if err == nil || !strings.Contains(err.Error(), "maximum supported dimension for an array is 64, found 300000") {
		t.Fatalf("300000 dimensions: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if _, _, err := ReadHeader(bytes.NewReader(header(65))); err == nil || !strings.Contains(err.Error(), "found 65") {
		t.Fatalf("65 dimensions: %v", err)
	}
	h, _, err := ReadHeader(bytes.NewReader(header(64)))
	if err != nil || len(h.Shape) != 64 {
		t.Fatalf("64 dimensions: %+v, %v", h, err)
	}
}

func TestBFloat16IsRefusedOnWrite(t *testing.T) {
	_, err := Header{DType: device.BFloat16, Shape: []int{2}}.Encode()
	if err == nil || err.Error() != "bfloat16 has no NumPy dtype; convert the array to float32 first, which holds every bfloat16 value exactly" {
		t.Fatalf("bfloat16: %v", err)
	}
}
