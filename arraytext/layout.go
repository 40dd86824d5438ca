package arraytext

import (
	"strings"

	"github.com/gluaproject/glua/device"
)

// NumPy's defaults: threshold, edgeitems and linewidth.
const (
	Threshold = 1000
	EdgeItems = 3
	LineWidth = 75
)

// Fetch copies count elements, starting at flat element start of the
// array, into dst (count times the dtype's size bytes).
type Fetch func(dst []byte, start, count int) error

// Format writes the elements of an array of the given shape and dtype,
// fetching only those it shows. An array with no elements is "[]".
func Format(shape []int, dt device.DType, fetch Fetch) (string, error) {
	l := newLayout(shape)
	if l.count == 0 {
		return "[]", nil
	}
	data := make([]byte, l.count*dt.Size())
	off := 0
	for _, r := range l.runs() {
		n := r.count * dt.Size()
		if err := fetch(data[off:off+n], r.start, r.count); err != nil {
			return "", err
		}
		off += n
	}
	w := newWriter(l, words(dt, data, l.count))
	var b strings.Builder
	w.array(&b, 0, 0, 1, LineWidth)
	return b.String(), nil
}

// layout is which elements the text of an array shows: in each dimension
// all of them, or the first and last EdgeItems when the array is
// summarised and the dimension is longer than twice that.
type layout struct {
	shape []int
	shown []int // per dimension, how many indices are shown
	gap   []bool
	count int // elements shown
}

func newLayout(shape []int) *layout {
	size := 1
	for _, d := range shape {
		size *= d
	}
	l := &layout{shape: shape, shown: make([]int, len(shape)), gap: make([]bool, len(shape)), count: 1}
	for i, d := range shape {
		l.shown[i] = d
		if size > Threshold && d > 2*EdgeItems {
			l.shown[i], l.gap[i] = 2*EdgeItems, true
		}
		l.count *= l.shown[i]
	}
	return l
}

// index is the index in dimension dim of its pos-th shown index.
func (l *layout) index(dim, pos int) int {
	if l.gap[dim] && pos >= EdgeItems {
		return l.shape[dim] - l.shown[dim] + pos
	}
	return pos
}

// run is count elements in a row, from flat element start.
type run struct{ start, count int }

// runs are the contiguous pieces of the array that hold the shown
// elements, in row-major order, each as long as it can be.
func (l *layout) runs() []run {
	var out []run
	add := func(start, count int) {
		if n := len(out); n > 0 && out[n-1].start+out[n-1].count == start {
			out[n-1].count += count
			return
		}
		out = append(out, run{start, count})
	}
	last := len(l.shape) - 1
	stride := strides(l.shape)
	var walk func(dim, base int)
	walk = func(dim, base int) {
		if dim == last {
			if l.gap[dim] {
				add(base, EdgeItems)
				add(base+l.shape[dim]-EdgeItems, EdgeItems)
			} else {
				add(base, l.shape[dim])
			}
			return
		}
		for pos := 0; pos < l.shown[dim]; pos++ {
			walk(dim+1, base+l.index(dim, pos)*stride[dim])
		}
	}
	walk(0, 0)
	return out
}

// strides are, per dimension, the elements one index of it spans in a
// row-major array of the shape: computed once, so that a walk costs as
// much as the elements it visits, not times the dimensions.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// writer lays out the shown elements' words, NumPy's _formatArray,
// into one builder: the text costs time in proportion to its length,
// however many dimensions the array has.
type writer struct {
	l      *layout
	words  []string
	stride []int // per dimension, the words one shown index of it spans
	// spaces and newlines are sliced for indents and the blank lines
	// between sub-arrays, never built anew.
	spaces, newlines string
}

func newWriter(l *layout, words []string) *writer {
	n := len(l.shape)
	return &writer{l: l, words: words, stride: strides(l.shown),
		spaces: strings.Repeat(" ", n+1), newlines: strings.Repeat("\n", n)}
}

// array writes the sub-array at dimension dim whose first shown element
// is word number first; indent spaces start its continuation lines, and
// no line passes width.
func (w *writer) array(b *strings.Builder, dim, first, indent, width int) {
	b.WriteByte('[')
	if dim == len(w.l.shape)-1 {
		w.row(b, first, indent, width-1)
	} else {
		blank := len(w.l.shape) - dim - 2
		for pos := 0; pos < w.l.shown[dim]; pos++ {
			if pos > 0 {
				w.separate(b, blank, indent)
			}
			if w.l.gap[dim] && pos == EdgeItems {
				b.WriteString("...")
				w.separate(b, blank, indent)
			}
			w.array(b, dim+1, first+pos*w.stride[dim], indent+1, width-1)
		}
	}
	b.WriteByte(']')
}

// separate ends a sub-array: a comma, a new line, blank empty lines and
// the next one's indent.
func (w *writer) separate(b *strings.Builder, blank, indent int) {
	b.WriteString(",\n")
	b.WriteString(w.newlines[:blank])
	b.WriteString(w.spaces[:indent])
}

// row writes the words of the last dimension, separated by ", " or, where
// the next word would pass width, by "," and a new line.
func (w *writer) row(b *strings.Builder, first, indent, width int) {
	dim := len(w.l.shape) - 1
	line := indent
	put := func(word string, after bool) {
		if after {
			b.WriteByte(',')
			line += 2 // NumPy counts the space before deciding to wrap
			if line+len(word) > width {
				b.WriteByte('\n')
				b.WriteString(w.spaces[:indent])
				line = indent
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(word)
		line += len(word)
	}
	for pos := 0; pos < w.l.shown[dim]; pos++ {
		if w.l.gap[dim] && pos == EdgeItems {
			put("...", true)
		}
		put(w.words[first+pos], pos > 0)
	}
}
