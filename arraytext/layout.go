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
	w := &writer{l: l, words: words(dt, data, l.count)}
	return w.array(0, 0, " ", LineWidth), nil
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
	var walk func(dim, base int)
	walk = func(dim, base int) {
		stride := 1
		for _, d := range l.shape[dim+1:] {
			stride *= d
		}
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
			walk(dim+1, base+l.index(dim, pos)*stride)
		}
	}
	walk(0, 0)
	return out
}

// writer lays out the shown elements' words, NumPy's _formatArray.
type writer struct {
	l     *layout
	words []string
}

// array is the text of the sub-array at dimension dim whose first shown
// element is word number first; indent starts its continuation lines,
// and no line passes width.
func (w *writer) array(dim, first int, indent string, width int) string {
	stride := 1
	for _, n := range w.l.shown[dim+1:] {
		stride *= n
	}
	var b strings.Builder
	if dim == len(w.l.shape)-1 {
		w.row(&b, first, indent, width-1)
	} else {
		sep := ",\n" + strings.Repeat("\n", len(w.l.shape)-dim-2)
		for pos := 0; pos < w.l.shown[dim]; pos++ {
			if pos > 0 {
				b.WriteString(sep + indent)
			}
			if w.l.gap[dim] && pos == EdgeItems {
				b.WriteString("..." + sep + indent)
			}
			b.WriteString(w.array(dim+1, first+pos*stride, indent+" ", width-1))
		}
	}
	return "[" + b.String() + "]"
}

// row writes the words of the last dimension, separated by ", " or, where
// the next word would pass width, by "," and a new line.
func (w *writer) row(b *strings.Builder, first int, indent string, width int) {
	dim := len(w.l.shape) - 1
	line := len(indent)
	put := func(word string, after bool) {
		if after {
			b.WriteByte(',')
			line += 2 // NumPy counts the space before deciding to wrap
			if line+len(word) > width {
				b.WriteString("\n" + indent)
				line = len(indent)
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
