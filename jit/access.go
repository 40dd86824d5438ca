package jit

// element resolves an access to its bytes and row-major offset, checking
// every index: the CPU always does, so that a kernel's indexing errors
// show up in CI rather than as a GPU's silent corruption.
func (c *compiler) element(arr *Array, idx []Expr, line int) func(*thread) ([]byte, int) {
	ix := make([]intFn, len(idx))
	for i, e := range idx {
		ix[i] = c.int(e)
	}
	p := c.p
	return func(t *thread) ([]byte, int) {
		data, shape := t.arrayOf(arr)
		off := 0
		var vals [MaxRank]int64
		bad := false
		for k, f := range ix {
			v := f(t)
			vals[k] = v
			if v < 1 || v > int64(shape[k]) {
				bad = true
			}
			off = off*shape[k] + int(v-1)
		}
		if bad {
			panic(runError{BoundsError(p, arr, line, vals[:len(ix)], shape)})
		}
		return data, off
	}
}

func (t *thread) arrayOf(arr *Array) ([]byte, []int) {
	if arr.Shared >= 0 {
		return t.shared[arr.Shared], arr.Shape
	}
	if arr.Local > 0 {
		return t.local[arr.Local-1], arr.Shape
	}
	a := t.run.arrays[arr.Param]
	return a.Data, a.Shape
}

func (c *compiler) floatLoad(l *Load) floatFn {
	at, d := c.element(l.Arr, l.Index, l.Line), l.Arr.DType
	return func(t *thread) float64 {
		b, i := at(t)
		v, _ := load(d, b, i)
		return v
	}
}

func (c *compiler) intLoad(l *Load) intFn {
	at, d := c.element(l.Arr, l.Index, l.Line), l.Arr.DType
	return func(t *thread) int64 {
		b, i := at(t)
		_, v := load(d, b, i)
		return v
	}
}

func (c *compiler) dim(arr *Array, k int) intFn {
	return func(t *thread) int64 {
		_, shape := t.arrayOf(arr)
		return int64(shape[k])
	}
}

func (c *compiler) size(arr *Array) intFn {
	return func(t *thread) int64 {
		_, shape := t.arrayOf(arr)
		n := int64(1)
		for _, d := range shape {
			n *= int64(d)
		}
		return n
	}
}
