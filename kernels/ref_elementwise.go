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

// Scale sets x = a·x.
func Scale(dt device.DType, x []byte, a float64) {
	n := count("Scale", dt, x)
	switch dt {
	case device.Float64:
		xs, flush := view[float64](x)
		for i := range xs {
			xs[i] *= a
		}
		flush()
	case device.Float32:
		xs, flush := view[float32](x)
		a32 := float32(a)
		for i := range xs {
			xs[i] *= a32
		}
		flush()
	case device.Float16, device.BFloat16:
		xs, flush := view[uint16](x)
		load, store := halfCodec(dt)
		a32 := float32(a)
		for i, h := range xs {
			xs[i] = store(a32 * load(h))
		}
		flush()
	default:
		for i := 0; i < n; i++ {
			device.Set(dt, x, i, a*device.Get(dt, x, i))
		}
	}
}

// Axpy sets y = a·x + y, the product rounded before the sum (never fused).
func Axpy(dt device.DType, y []byte, a float64, x []byte) {
	n := same("Axpy", dt, y, x)
	switch dt {
	case device.Float64:
		ys, flush := view[float64](y)
		xs, _ := view[float64](x)
		for i := range ys {
			ys[i] = float64(a*xs[i]) + ys[i]
		}
		flush()
	case device.Float32:
		ys, flush := view[float32](y)
		xs, _ := view[float32](x)
		a32 := float32(a)
		xs = xs[:len(ys)]
		for i := range ys {
			ys[i] = float32(a32*xs[i]) + ys[i]
		}
		flush()
	case device.Float16, device.BFloat16:
		ys, flush := view[uint16](y)
		xs, _ := view[uint16](x)
		load, store := halfCodec(dt)
		a32 := float32(a)
		for i, h := range ys {
			ys[i] = store(float32(a32*load(xs[i])) + load(h))
		}
		flush()
	default:
		for i := 0; i < n; i++ {
			device.Set(dt, y, i, float64(a*device.Get(dt, x, i))+device.Get(dt, y, i))
		}
	}
}

// Add sets y = y + x elementwise.
func Add(dt device.DType, y, x []byte) {
	n := same("Add", dt, y, x)
	switch dt {
	case device.Float64:
		ys, flush := view[float64](y)
		xs, _ := view[float64](x)
		for i := range ys {
			ys[i] += xs[i]
		}
		flush()
	case device.Float32:
		ys, flush := view[float32](y)
		xs, _ := view[float32](x)
		xs = xs[:len(ys)]
		for i := range ys {
			ys[i] += xs[i]
		}
		flush()
	case device.Float16, device.BFloat16:
		ys, flush := view[uint16](y)
		xs, _ := view[uint16](x)
		load, store := halfCodec(dt)
		for i, h := range ys {
			ys[i] = store(load(h) + load(xs[i]))
		}
		flush()
	default:
		for i := 0; i < n; i++ {
			device.Set(dt, y, i, device.Get(dt, y, i)+device.Get(dt, x, i))
		}
	}
}

// Mul sets y = y·x elementwise.
func Mul(dt device.DType, y, x []byte) {
	n := same("Mul", dt, y, x)
	switch dt {
	case device.Float64:
		ys, flush := view[float64](y)
		xs, _ := view[float64](x)
		for i := range ys {
			ys[i] *= xs[i]
		}
		flush()
	case device.Float32:
		ys, flush := view[float32](y)
		xs, _ := view[float32](x)
		xs = xs[:len(ys)]
		for i := range ys {
			ys[i] *= xs[i]
		}
		flush()
	case device.Float16, device.BFloat16:
		ys, flush := view[uint16](y)
		xs, _ := view[uint16](x)
		load, store := halfCodec(dt)
		for i, h := range ys {
			ys[i] = store(load(h) * load(xs[i]))
		}
		flush()
	default:
		for i := 0; i < n; i++ {
			device.Set(dt, y, i, device.Get(dt, y, i)*device.Get(dt, x, i))
		}
	}
}

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
