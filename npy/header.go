package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gluaproject/glua/device"
)

// Header is what an .npy file says about its array.
type Header struct {
	DType device.DType
	// Shape is the array's shape as the file gives it: empty for a 0-d
	// array (a NumPy scalar), which holds one element.
	Shape []int
	// BigEndian says the file stores elements big-endian ('>f4'). Reading
	// swaps them into glua's little-endian order; mapping refuses them.
	BigEndian bool
}

const (
	magic = "\x93NUMPY"
	// align is where NumPy starts the data: at a multiple of 64 bytes,
	// which keeps a mapped array aligned for any dtype and vector load.
	align = 64
	// maxHeaderBytes bounds the header read: NumPy writes tens of bytes
	// per dimension and refuses headers over 10000 bytes itself, so a
	// larger length means a corrupt file, not a memory allocation to try.
	maxHeaderBytes = 1 << 20
	// maxElements is the runtime's bound on an array's size, applied here
	// so that a corrupt shape cannot overflow the byte count.
	maxElements = 1 << 50
)

// Size is the number of elements: the product of the shape, 1 for a 0-d
// array.
func (h Header) Size() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// NBytes is the size of the data in bytes.
func (h Header) NBytes() int64 { return int64(h.Size()) * int64(h.DType.Size()) }

// ReadHeader reads an .npy header from r and leaves r at the first byte of
// the data, dataOffset bytes from the start. Formats 1.0, 2.0 and 3.0 are
// read; what glua cannot represent is an error that says why.
func ReadHeader(r io.Reader) (h Header, dataOffset int64, err error) {
	var pre [8]byte
	n, err := readFull(r, pre[:])
	switch {
	case err != nil:
		return Header{}, 0, err
	case n == 0:
		return Header{}, 0, errors.New("the file is empty, not an .npy file")
	case !strings.HasPrefix(magic, string(pre[:min(n, len(magic))])):
		return Header{}, 0, fmt.Errorf("not an .npy file: it begins with %q, not NumPy's %q", pre[:min(n, len(magic))], magic)
	case n < len(pre):
		return Header{}, 0, fmt.Errorf("truncated header: the file ends after %d bytes", n)
	}
	major, minor := pre[6], pre[7]
	if minor != 0 || major < 1 || major > 3 {
		return Header{}, 0, fmt.Errorf("unsupported .npy format version %d.%d (glua reads 1.0, 2.0 and 3.0)", major, minor)
	}
	lenBytes := 4
	if major == 1 {
		lenBytes = 2
	}
	var lenBuf [4]byte
	if n, err = readFull(r, lenBuf[:lenBytes]); err != nil {
		return Header{}, 0, err
	}
	if n < lenBytes {
		return Header{}, 0, fmt.Errorf("truncated header: the file ends after %d bytes, inside the header length", len(pre)+n)
	}
	hlen := uint64(binary.LittleEndian.Uint32(lenBuf[:]))
	if hlen > maxHeaderBytes {
		return Header{}, 0, fmt.Errorf("header length %d is more than any .npy header needs (glua reads up to %d bytes): the file is corrupt", hlen, maxHeaderBytes)
	}
	text := make([]byte, hlen)
	if n, err = readFull(r, text); err != nil {
		return Header{}, 0, err
	}
	if uint64(n) < hlen {
		return Header{}, 0, fmt.Errorf("truncated header: it says %d bytes but the file ends %d bytes into it", hlen, n)
	}
	h, err = parseHeader(string(text))
	return h, int64(len(pre)+lenBytes) + int64(hlen), err
}

// readFull is io.ReadFull with the end of the input not an error: the
// caller says what was cut short.
func readFull(r io.Reader, buf []byte) (int, error) {
	n, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = nil
	}
	return n, err
}

// parseHeader checks the header's dict: exactly the keys descr,
// fortran_order and shape, as NumPy requires.
func parseHeader(text string) (Header, error) {
	v, err := parseLiteral(text)
	if err != nil {
		return Header{}, fmt.Errorf("header is not a Python dict literal (%v): %s", err, excerpt(text))
	}
	d, ok := v.(map[string]any)
	if !ok {
		return Header{}, fmt.Errorf("header is not a dict: %s", excerpt(text))
	}
	for _, key := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := d[key]; !ok {
			return Header{}, fmt.Errorf("header has no '%s': %s", key, excerpt(text))
		}
	}
	if len(d) != 3 {
		return Header{}, fmt.Errorf("header has keys other than 'descr', 'fortran_order' and 'shape': %s", excerpt(text))
	}
	var h Header
	switch descr := d["descr"].(type) {
	case string:
		if h.DType, h.BigEndian, err = parseDescr(descr); err != nil {
			return Header{}, err
		}
	case list:
		return Header{}, errors.New("structured arrays (a dtype with fields) are not supported; glua reads arrays of one numeric dtype")
	default:
		return Header{}, fmt.Errorf("descr is not a dtype string: %s", excerpt(text))
	}
	if h.Shape, err = parseShape(d["shape"]); err != nil {
		return Header{}, err
	}
	fortran, ok := d["fortran_order"].(bool)
	if !ok {
		return Header{}, fmt.Errorf("fortran_order is neither True nor False: %s", excerpt(text))
	}
	if fortran && !sameInBothOrders(h.Shape) {
		return Header{}, fmt.Errorf("fortran_order is True: the %s array is stored column-major, and glua reads row-major (C order) only; save np.ascontiguousarray(a) instead", shapeString(h.Shape))
	}
	return h, nil
}

// parseShape checks the shape: a tuple of non-negative integers whose
// product stays within maxElements.
func parseShape(v any) ([]int, error) {
	t, ok := v.(tuple)
	if !ok {
		return nil, fmt.Errorf("shape is not a tuple: %s", repr(v))
	}
	if err := device.CheckDims(len(t)); err != nil {
		return nil, err
	}
	shape := make([]int, len(t))
	n := int64(1)
	for i, x := range t {
		d, ok := x.(int64)
		if !ok || d < 0 {
			return nil, fmt.Errorf("shape[%d] is %s; dimensions are non-negative integers", i+1, repr(x))
		}
		shape[i] = int(d)
		if d != 0 && n > maxElements/d {
			return nil, fmt.Errorf("shape %s is too large", shapeString(shape[:i+1]))
		}
		n *= d
	}
	return shape, nil
}

// sameInBothOrders reports whether row-major and column-major lay the
// shape out alike: at most one dimension longer than 1.
func sameInBothOrders(shape []int) bool {
	long := 0
	for _, d := range shape {
		if d > 1 {
			long++
		}
	}
	return long <= 1
}

// excerpt quotes the start of a header for an error message.
func excerpt(text string) string {
	text = strings.TrimRight(text, " \n")
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	return strconv.Quote(text)
}

// Encode is the header as NumPy writes it: format 1.0, or 2.0 when the
// header is longer than 1.0's 65535 bytes, padded with spaces to end in a
// newline at a multiple of 64 bytes.
func (h Header) Encode() ([]byte, error) {
	descr, err := Descr(h.DType)
	if err != nil {
		return nil, err
	}
	if h.BigEndian && descr[0] == '<' {
		descr = ">" + descr[1:]
	}
	for i, d := range h.Shape {
		if d < 0 {
			return nil, fmt.Errorf("shape[%d] is %d; dimensions cannot be negative", i+1, d)
		}
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shapeTuple(h.Shape))
	major, lenBytes := byte(1), 2
	hlen := padded(len(magic)+2+lenBytes, len(dict)+1)
	if hlen > 1<<16-1 {
		major, lenBytes = 2, 4
		hlen = padded(len(magic)+2+lenBytes, len(dict)+1)
	}
	out := make([]byte, 0, len(magic)+2+lenBytes+hlen)
	out = append(out, magic...)
	out = append(out, major, 0)
	if lenBytes == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen))
	}
	out = append(out, dict...)
	for len(out) < cap(out)-1 {
		out = append(out, ' ')
	}
	return append(out, '\n'), nil
}

// padded is the length of a header of n bytes after a prefix of pre,
// padded so that the data begins at a multiple of align.
func padded(pre, n int) int { return n + (align-(pre+n)%align)%align }

// shapeTuple writes a shape as Python writes a tuple: (), (5,), (2, 3).
func shapeTuple(shape []int) string {
	if len(shape) == 1 {
		return "(" + strconv.Itoa(shape[0]) + ",)"
	}
	return "(" + joinInts(shape, ", ") + ")"
}

// shapeString writes a shape as glua's messages do: 2x3.
func shapeString(shape []int) string {
	if len(shape) == 0 {
		return "0-d"
	}
	return joinInts(shape, "x")
}

func joinInts(xs []int, sep string) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}
