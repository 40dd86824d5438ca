package kernels

import (
	"github.com/gluaproject/glua/device"
)

// Fill sets every element of x to v, converted as device.Set converts it.
func Fill(dt device.DType, x []byte, v float64) {
	n := count("Fill", dt, x)
	switch dt {
	case device.Float64:
		xs, flush := view[float64](x)
		for i := range xs {
			xs[i] = v
		}
		flush()
	case device.Float32:
		xs, flush := view[float32](x)
		v32 := float32(v)
		for i := range xs {
			xs[i] = v32
		}
		flush()
	case device.Float16, device.BFloat16:
		xs, flush := view[uint16](x)
		_, store := halfCodec(dt)
		h := store(float32(v))
		for i := range xs {
			xs[i] = h
		}
		flush()
	default:
		if n == 0 {
			return
		}
		// Every element gets the same bits: convert once, then replicate.
		size := dt.Size()
		device.Set(dt, x, 0, v)
		for filled := size; filled < len(x); filled *= 2 {
			copy(x[filled:], x[:filled])
		}
	}
}

// Apply runs op on host memory in place: y = f(y, x, a) elementwise, or
// for a one-array kernel y = f(y, a) with x nil.
func (op *ElementwiseOp) Apply(dt device.DType, y []byte, a float64, x []byte) {
	op.ApplyTo(dt, y, y, a, x)
}

// ApplyTo is Apply with the result written to out and y left as it was:
// out = f(y, x, a), or out = f(y, a) for a one-array kernel. out is y
// itself (Apply) or shares no byte with y or x. On an integer dtype a
// must be an integer of magnitude below 2^63 (IntegerScalar), as the
// runtime checks first; another number panics.
func (op *ElementwiseOp) ApplyTo(dt device.DType, out, y []byte, a float64, x []byte) {
	n := same(op.goName, dt, out, y)
	if op.Arrays == 2 {
		same(op.goName, dt, y, x)
	} else {
		x = nil
	}
	if op.loops.f32 == nil {
		panic("kernels." + op.goName + ": no Go loops; run go generate ./kernels")
	}
	var ia int64
	if !dt.IsFloat() {
		var err error
		if ia, err = op.intScalar(dt, a); err != nil {
			panic(err.Error())
		}
	}
	switch dt {
	case device.Float64:
		applyLoop(op.loops.f64, out, y, x, a)
	case device.Float32:
		applyLoop(op.loops.f32, out, y, x, float32(a))
	case device.Float16, device.BFloat16:
		outs, flush := view[uint16](out)
		ys, _ := view[uint16](y)
		xs, _ := view[uint16](x)
		h := halfFloats(dt == device.BFloat16)
		inBlocks(op.loops.f32, outs, ys, xs, n, float32(a), h.get, h.put)
		flush()
	// The conversions of a to the dtype keep its low bits: a modulo
	// 2^bits, as Go defines them.
	case device.Int32:
		applyLoop(op.loops.i32, out, y, x, int32(ia))
	case device.Int64:
		applyLoop(op.loops.i64, out, y, x, ia)
	default:
		applyLoop(op.loops.u8, out, y, x, uint8(ia))
	}
}

// applyLoop runs loop on elements stored as the type they compute in. A
// misaligned out gets a copy that flush stores back, after the loop has
// read every element of y and x.
func applyLoop[C computeType](loop func(out, ys, xs []C, a C), out, y, x []byte, a C) {
	outs, flush := view[C](out)
	ys, _ := view[C](y)
	xs, _ := view[C](x)
	loop(outs, ys, xs, a)
	flush()
}

// elementwiseBlock is how many elements inBlocks converts at a time: its
// buffers stay in L1.
const elementwiseBlock = 256

// inBlocks runs loop on n elements stored as S, which compute as C: get
// converts the elements of ys (or xs, nil for one array) from i on into
// a block of C, put stores a block of results into out. The calls through
// get, put and loop are one per block; the per-element work is in direct
// calls.
func inBlocks[S any, C floatCompute](loop func(out, ys, xs []C, a C), out, ys, xs []S, n int, a C,
	get func(dst []C, src []S, i int), put func(dst []S, i int, src []C)) {
	// The buffers escape through loop, a func value, so they are allocated:
	// no larger than the array, for the many calls on small ones.
	yb := make([]C, min(n, elementwiseBlock))
	var xb []C // stays nil for one array, whose loop ignores xs
	if xs != nil {
		xb = make([]C, len(yb))
	}
	for i := 0; i < n; i += elementwiseBlock {
		m := min(elementwiseBlock, n-i)
		get(yb[:m], ys, i)
		xblock := xb
		if xs != nil {
			xblock = xb[:m]
			get(xblock, xs, i)
		}
		loop(yb[:m], yb[:m], xblock, a)
		put(out, i, yb[:m])
	}
}

// halfFloats converts float16 (false) or bfloat16 (true) elements.
type halfFloats bool

func (bf halfFloats) get(dst []float32, src []uint16, i int) {
	if bf {
		convertAll(dst, src[i:], device.BFloat16Value)
	} else {
		convertAll(dst, src[i:], device.Float16Value)
	}
}

func (bf halfFloats) put(dst []uint16, i int, src []float32) {
	if bf {
		convertAll(dst[i:], src, device.BFloat16Bits)
	} else {
		convertAll(dst[i:], src, device.Float16Bits)
	}
}

// convertAll sets dst[k] = f(src[k]) for every k of the shorter. It is
// inlined where f is a named function, so that f is called directly.
func convertAll[S, D any](dst []D, src []S, f func(S) D) {
	src = src[:min(len(src), len(dst))]
	for k, v := range src {
		dst[k] = f(v)
	}
}

// The Go functions of the first elementwise kernels, kept for their
// callers; a kernel added to the table is reached through its
// ElementwiseOp.
var (
	scaleOp = LookupElementwise("scale")
	axpyOp  = LookupElementwise("axpy")
	addOp   = LookupElementwise("add")
	mulOp   = LookupElementwise("mul")
)

// Scale sets x = a·x.
func Scale(dt device.DType, x []byte, a float64) { scaleOp.Apply(dt, x, a, nil) }

// Axpy sets y = a·x + y, the product rounded before the sum (never fused).
func Axpy(dt device.DType, y []byte, a float64, x []byte) { axpyOp.Apply(dt, y, a, x) }

// Add sets y = y + x elementwise.
func Add(dt device.DType, y, x []byte) { addOp.Apply(dt, y, 0, x) }

// Mul sets y = y·x elementwise.
func Mul(dt device.DType, y, x []byte) { mulOp.Apply(dt, y, 0, x) }

// Copy converts src, of dtype srcDT, into dst, of dtype dstDT; both hold the
// same number of elements. Equal dtypes copy bits.
func Copy(dstDT device.DType, dst []byte, srcDT device.DType, src []byte) {
	n, ns := count("Copy", dstDT, dst), count("Copy", srcDT, src)
	if n != ns {
		panic("kernels.Copy: destination and source have different element counts")
	}
	if dstDT == srcDT {
		copy(dst, src)
		return
	}
	switch {
	case srcDT == device.Float32 && dstDT == device.Float64:
		d, flush := view[float64](dst)
		s, _ := view[float32](src)
		for i, v := range s {
			d[i] = float64(v)
		}
		flush()
	case srcDT == device.Float64 && dstDT == device.Float32:
		d, flush := view[float32](dst)
		s, _ := view[float64](src)
		for i, v := range s {
			d[i] = float32(v)
		}
		flush()
	case srcDT == device.Float32 && dstDT.IsHalf():
		d, flush := view[uint16](dst)
		s, _ := view[float32](src)
		_, store := halfCodec(dstDT)
		for i, v := range s {
			d[i] = store(v)
		}
		flush()
	case srcDT.IsHalf() && dstDT == device.Float32:
		d, flush := view[float32](dst)
		s, _ := view[uint16](src)
		load, _ := halfCodec(srcDT)
		for i, h := range s {
			d[i] = load(h)
		}
		flush()
	default:
		for i := 0; i < n; i++ {
			device.Set(dstDT, dst, i, device.Get(srcDT, src, i))
		}
	}
}
