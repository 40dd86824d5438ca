package kernels_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gluaproject/glua/cuda"
	"github.com/gluaproject/glua/cuda/cudatest"
	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

var _ kernels.Device = (*cuda.Backend)(nil)

// The elementwise kernels' residency needs the backend's carveouts.
var _ kernels.Carveouts = (*cuda.Backend)(nil)

// TestGPUElementwiseResidencyFollowsTheDevice: a GPU on the CUDA backend
// launches each elementwise kernel with the residency of its device's
// compute capability and the arrays the kernel reads.
func TestGPUElementwiseResidencyFollowsTheDevice(t *testing.T) {
	b := cudatest.Shared(t)
	info, err := b.Info()
	if err != nil {
		t.Fatal(err)
	}
	g := kernels.NewGPU(b)
	for _, op := range kernels.ElementwiseOps() {
		shared, carveout := g.Residency(op)
		wantShared, wantCarveout := kernels.ElementwiseResidency(info.ComputeCapability, op.Arrays)
		if shared != wantShared || carveout != wantCarveout {
			t.Errorf("%s on %s (%d.%d): %d bytes, carveout %d%%; want %d, %d%%", op.Name, info.Name, info.ComputeCapability[0], info.ComputeCapability[1], shared, carveout, wantShared, wantCarveout)
		}
	}
}

func TestMain(m *testing.M) { cudatest.Main(m) }

// testDevice is what these tests need: a kernels.Device they can also
// allocate on and upload to.
type testDevice interface {
	kernels.Device
	Alloc(nbytes uint64) (device.Ptr, error)
	Free(p device.Ptr, nbytes uint64) error
	Upload(dst device.Ptr, src []byte, s device.Stream) error
}

// gpu is the device the tests run on: the shared CUDA backend.
var gpu = func(t *testing.T) testDevice { return cudatest.Shared(t) }

const guard = 64 // poisoned bytes around every operand, which no kernel may touch

// operand is an array on the device inside a poisoned buffer.
type operand struct {
	b     testDevice
	base  device.Ptr
	size  int // whole buffer
	off   int // bytes from base to the array
	bytes int
}

func (o operand) ptr() device.Ptr { return o.base + device.Ptr(o.off) }

// place uploads data at byte offset guard+shift of a poisoned buffer.
func place(t *testing.T, b testDevice, data []byte, shift int) operand {
	t.Helper()
	size := len(data) + 2*guard + 16
	base, err := b.Alloc(uint64(size))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free(base, uint64(size)) })
	buf := bytes.Repeat([]byte{0xA5}, size)
	copy(buf[guard+shift:], data)
	if err := b.Upload(base, buf, 0); err != nil {
		t.Fatal(err)
	}
	return operand{b: b, base: base, size: size, off: guard + shift, bytes: len(data)}
}

// read downloads the array and checks that the poison around it is intact.
func (o operand) read(t *testing.T, what string) []byte {
	t.Helper()
	buf := make([]byte, o.size)
	if err := o.b.Download(buf, o.base, 0); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i, c := range buf {
		if (i < o.off || i >= o.off+o.bytes) && c != 0xA5 {
			t.Fatalf("%s: byte %d outside the array was overwritten", what, i-o.off)
		}
	}
	return buf[o.off : o.off+o.bytes]
}

func checkSame(t *testing.T, what string, dt device.DType, got, want, inputs []byte) {
	t.Helper()
	if i, ok := sameElements(dt, got, want); !ok {
		in := ""
		if inputs != nil {
			in = " from " + formatElem(dt, inputs, i)
		}
		t.Errorf("%s: element %d is %s, the Go reference gives %s%s", what, i, formatElem(dt, got, i), formatElem(dt, want, i), in)
	}
}

// formatElem shows element i as a number and as its stored bits.
func formatElem(dt device.DType, b []byte, i int) string {
	var bits uint64
	for k := dt.Size() - 1; k >= 0; k-- {
		bits = bits<<8 | uint64(b[i*dt.Size()+k])
	}
	return fmt.Sprintf("%v (bits %#x)", device.Get(dt, b, i), bits)
}

// kernelNumber is a number for a kernel on dt: any of a few floats for
// Fill (arithmetic false) and the float dtypes, an integer below 2^63 in
// magnitude, as they require, for the integer dtypes' arithmetic.
func kernelNumber(rng *rand.Rand, dt device.DType, arithmetic bool) float64 {
	if arithmetic && !dt.IsFloat() {
		return kernels.IntScalars[rng.IntN(len(kernels.IntScalars))]
	}
	return []float64{2.5, -1.75, 1e10, 0.1, -3, math.Inf(-1), 70000.5}[rng.IntN(7)]
}

// TestGPUElementwiseKernelsMatchTheGoReferenceBitForBit runs Fill and
// every kernel of the elementwise table.
func TestGPUElementwiseKernelsMatchTheGoReferenceBitForBit(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	ops := append([]*kernels.ElementwiseOp{nil}, kernels.ElementwiseOps()...) // nil: Fill
	for _, dt := range device.DTypes {
		for _, n := range []int{1, 7, 1000, 100003} {
			// shift 0 takes the 16-byte path, one element the scalar path.
			for _, shift := range []int{0, dt.Size()} {
				for _, op := range ops {
					a := kernelNumber(rng, dt, op != nil)
					y := hostileValues(rng, dt, n)
					x := hostileValues(rng, dt, n)
					yd, xd := place(t, b, y, shift), place(t, b, x, shift)
					want := append([]byte(nil), y...)
					var err error
					name := "Fill"
					switch {
					case op == nil:
						err = g.Fill(dt, yd.ptr(), a, n, 0)
						kernels.Fill(dt, want, a)
					case op.Arrays == 1:
						name = op.Name
						err = g.Elementwise(op, dt, yd.ptr(), a, 0, n, 0)
						op.Apply(dt, want, a, nil)
					default:
						name = op.Name
						err = g.Elementwise(op, dt, yd.ptr(), a, xd.ptr(), n, 0)
						op.Apply(dt, want, a, x)
					}
					what := fmt.Sprintf("%s %s n=%d shift=%d a=%v", name, dt, n, shift, a)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkSame(t, what, dt, yd.read(t, what), want, nil)
					if got := xd.read(t, what+" (source)"); !bytes.Equal(got, x) {
						t.Errorf("%s: the source operand changed", what)
					}
				}
			}
		}
	}
}

// TestGPUElementwiseToWritesOnlyItsOutput runs every kernel of the table
// into a separate array, as the operators do: the bits of the Go
// reference, and neither operand touched.
func TestGPUElementwiseToWritesOnlyItsOutput(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, dt := range device.DTypes {
		for _, n := range []int{1, 1000, 100003} {
			// An output shifted by an element takes the scalar path alone.
			for _, shift := range []int{0, dt.Size()} {
				for _, op := range kernels.ElementwiseOps() {
					a := kernelNumber(rng, dt, true)
					y, x := hostileValues(rng, dt, n), hostileValues(rng, dt, n)
					yd, xd := place(t, b, y, 0), place(t, b, x, 0)
					od := place(t, b, hostileValues(rng, dt, n), shift)
					want := make([]byte, len(y))
					xarg, xptr := x, xd.ptr()
					if op.Arrays == 1 {
						xarg, xptr = nil, 0
					}
					op.ApplyTo(dt, want, y, a, xarg)
					what := fmt.Sprintf("%s to a new array %s n=%d shift=%d a=%v", op.Name, dt, n, shift, a)
					if err := g.ElementwiseTo(op, dt, od.ptr(), yd.ptr(), a, xptr, n, 0); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkSame(t, what, dt, od.read(t, what), want, nil)
					if !bytes.Equal(yd.read(t, what+" (y)"), y) || !bytes.Equal(xd.read(t, what+" (x)"), x) {
						t.Errorf("%s: an operand changed", what)
					}
				}
			}
		}
	}
}

func TestGPUFillCoversEveryAlignment(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, dt := range device.DTypes {
		for shift := 0; shift < 32; shift += dt.Size() {
			for _, n := range []int{1, 2, 3, 9, 33, 4097} {
				v := rng.NormFloat64() * 1000
				d := place(t, b, hostileValues(rng, dt, n), shift)
				if err := g.Fill(dt, d.ptr(), v, n, 0); err != nil {
					t.Fatal(err)
				}
				want := make([]byte, n*dt.Size())
				kernels.Fill(dt, want, v)
				what := fmt.Sprintf("Fill %s n=%d shift=%d v=%v", dt, n, shift, v)
				checkSame(t, what, dt, d.read(t, what), want, nil)
			}
		}
	}
}

// TestGPUCopyConvertsBetweenEveryPairOfDTypes: one element, a grid's
// partial block, and more elements than a round of the grid with a tail.
func TestGPUCopyConvertsBetweenEveryPairOfDTypes(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, src := range device.DTypes {
		for _, dst := range device.DTypes {
			for _, n := range []int{1, 5000, 1<<20 + 3} {
				x := hostileValues(rng, src, n)
				xd := place(t, b, x, src.Size())
				yd := place(t, b, hostileValues(rng, dst, n), 0)
				if err := g.Copy(dst, yd.ptr(), src, xd.ptr(), n, 0); err != nil {
					t.Fatal(err)
				}
				want := make([]byte, n*dst.Size())
				kernels.Copy(dst, want, src, x)
				what := fmt.Sprintf("Copy %s -> %s n=%d", src, dst, n)
				got := yd.read(t, what)
				if src == dst && !bytes.Equal(got, want) {
					t.Errorf("%s: a same-dtype copy changed bits", what)
				}
				if i, ok := sameElements(dst, got, want); !ok {
					t.Errorf("%s: element %d is %s, the Go reference gives %s from %s", what, i,
						formatElem(dst, got, i), formatElem(dst, want, i), formatElem(src, x, i))
				}
			}
		}
	}
}

// The generators on the device and their Go references, by name.
var generators = []struct {
	name string
	gpu  func(g *kernels.GPU, dt device.DType, x device.Ptr, seed, offset uint64, n int, s device.Stream) error
	ref  func(dt device.DType, x []byte, seed, offset uint64) error
}{
	{"Rand", (*kernels.GPU).Rand, kernels.Rand},
	{"RandN", (*kernels.GPU).RandN, kernels.RandN},
}

func TestGPURandomNumbersAreBitIdenticalToTheGoReference(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, gen := range generators {
		for _, dt := range device.DTypes {
			n := 100000 + rng.IntN(1000)
			d := place(t, b, make([]byte, n*dt.Size()), dt.Size())
			seed, offset := rng.Uint64(), rng.Uint64()
			what := fmt.Sprintf("%s %s seed %d offset %d", gen.name, dt, seed, offset)
			err := gen.gpu(g, dt, d.ptr(), seed, offset, n, 0)
			if !dt.IsFloat() {
				if err == nil || !strings.Contains(err.Error(), dt.String()) {
					t.Errorf("%s: %v, want an error naming the dtype", what, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, n*dt.Size())
			if err := gen.ref(dt, want, seed, offset); err != nil {
				t.Fatal(err)
			}
			if got := d.read(t, what); !bytes.Equal(got, want) {
				i, _ := sameElements(dt, got, want)
				t.Errorf("%s: element %d is %s, want %s", what, i, formatElem(dt, got, i), formatElem(dt, want, i))
			}
		}
	}
}

// TestGPURandNAtItsExtremesIsBitIdentical draws the uniforms that random
// counters almost never reach: the smallest and largest, either side of
// the centre's edge (|u - 1/2| = 0.425) and of the far tail's (r = 5),
// where AS 241 changes polynomials, and next to 1/2. Seed 0 makes the
// counter the offset, and the inverse of the hash gives the counter of
// each hash.
func TestGPURandNAtItsExtremesIsBitIdentical(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	var ks []uint64 // u = (k + 1/2)·2^-52
	for _, edge := range []float64{0, 1.3887943864964021e-11, 0.075, 0.5, 0.925, 1 - 1.3887943864964021e-11, 1} {
		k := uint64(math.Min(edge*0x1p52, 0x1p52-1))
		for d := uint64(0); d < 3; d++ {
			ks = append(ks, max(k, d)-d, min(k+d, 1<<52-1))
		}
	}
	for _, dt := range []device.DType{device.Float32, device.Float64, device.Float16, device.BFloat16} {
		for _, k := range ks {
			offset := kernels.Unmix64(k << 12)
			d := place(t, b, make([]byte, dt.Size()), 0)
			if err := g.RandN(dt, d.ptr(), 0, offset, 1, 0); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, dt.Size())
			kernels.RandN(dt, want, 0, offset)
			what := fmt.Sprintf("RandN %s u = (%d + 1/2)·2^-52", dt, k)
			checkSame(t, what, dt, d.read(t, what), want, nil)
		}
	}
}

// TestGPURandNFloat32AtItsExtremesIsBitIdentical is the same for the
// float32 formula, Box–Muller on pairs whose hash h gives u1 = (h>>40 +
// 1)·2^-24 and the angle k = h>>16 & (2^24-1): the smallest and largest
// u1 (r = 5.77 and r = 0), either side of where the logarithm's
// reduction changes (u1 = √½), and angles either side of each quarter and
// eighth turn, where sin and cos change places or sign. Both values of
// each pair, and each alone.
func TestGPURandNFloat32AtItsExtremesIsBitIdentical(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	var hs []uint64
	for _, u := range []uint64{0, 11863276, 1<<24 - 12} { // (11863282 + 1)·2^-24 is float32's √½
		for d := uint64(0); d < 12; d++ {
			hs = append(hs, (u+d)<<40|0x5A5A<<16|0xBEEF)
		}
	}
	for turn := uint64(0); turn < 8; turn++ {
		for _, k := range []uint64{turn<<21 - 1, turn << 21, turn<<21 + 1} {
			hs = append(hs, 0x123456<<40|(k&(1<<24-1))<<16|0x77)
		}
	}
	for _, dt := range []device.DType{device.Float32, device.Float16, device.BFloat16} {
		for _, h := range hs {
			pair := 2 * kernels.Unmix64(h)
			for _, c := range []struct{ offset, n uint64 }{{pair, 2}, {pair, 1}, {pair + 1, 1}} {
				d := place(t, b, make([]byte, int(c.n)*dt.Size()), 0)
				if err := g.RandN(dt, d.ptr(), 0, c.offset, int(c.n), 0); err != nil {
					t.Fatal(err)
				}
				want := make([]byte, int(c.n)*dt.Size())
				kernels.RandN(dt, want, 0, c.offset)
				what := fmt.Sprintf("RandN %s hash %#x, %d from counter %d", dt, h, c.n, c.offset-pair)
				checkSame(t, what, dt, d.read(t, what), want, nil)
			}
		}
	}
}

// TestGPURandNIsBitIdenticalWhereverACallStartsAndEnds: the device
// stores a pair's two values at once where it can, and an element whose
// pair-mate lies outside the call alone; odd and even offsets, lengths
// and addresses (half a pair off alignment) all give the reference's
// bits and leave the bytes around the array alone.
func TestGPURandNIsBitIdenticalWhereverACallStartsAndEnds(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, dt := range []device.DType{device.Float32, device.Float16, device.BFloat16, device.Float64} {
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 255, 256, 257, 1000, 1001, 65537, 1 << 20, 1<<20 + 3} {
			for _, offset := range []uint64{0, 1, 2, 3, rng.Uint64() | 1, rng.Uint64() &^ 1} {
				for _, shift := range []int{0, dt.Size()} {
					seed := rng.Uint64()
					d := place(t, b, make([]byte, n*dt.Size()), shift)
					if err := g.RandN(dt, d.ptr(), seed, offset, n, 0); err != nil {
						t.Fatal(err)
					}
					want := make([]byte, n*dt.Size())
					kernels.RandN(dt, want, seed, offset)
					what := fmt.Sprintf("RandN %s n=%d seed %d offset %d shifted %d bytes", dt, n, seed, offset, shift)
					if got := d.read(t, what); !bytes.Equal(got, want) {
						i, _ := sameElements(dt, got, want)
						t.Fatalf("%s: element %d is %s, want %s", what, i, formatElem(dt, got, i), formatElem(dt, want, i))
					}
				}
			}
		}
	}
}

// finite replaces NaN and infinities, which would make a sum meaningless.
func finite(dt device.DType, x []byte) []byte {
	for i := range len(x) / dt.Size() {
		if v := device.Get(dt, x, i); math.IsNaN(v) || math.IsInf(v, 0) {
			device.Set(dt, x, i, float64(i%7)-3)
		}
	}
	return x
}

// reduceScratch is scratch for a reduction of any size, freed when the
// test ends.
func reduceScratch(t *testing.T, b testDevice) device.Ptr {
	t.Helper()
	n := kernels.ReduceScratchBytes(1 << 30)
	p, err := b.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free(p, n) })
	return p
}

// copiedBack hides the device's host words, so that reductions copy their
// result back from device memory.
type copiedBack struct{ testDevice }

// Reductions give the Go reference's bits both ways a result comes back:
// written by the kernel into a host word, and copied from device memory.
func TestGPUReductionsMatchTheGoReference(t *testing.T) {
	t.Run("host words", func(t *testing.T) { testReductionsMatchReference(t, gpu(t)) })
	t.Run("copied back", func(t *testing.T) { testReductionsMatchReference(t, copiedBack{gpu(t)}) })
}

func testReductionsMatchReference(t *testing.T, b testDevice) {
	g := kernels.NewGPU(b)
	rng := newRand(t)
	scratch := reduceScratch(t, b)
	for _, dt := range device.DTypes {
		for _, n := range []int{1, 255, 2049, 300001} {
			x := finite(dt, hostileValues(rng, dt, n))
			xd := place(t, b, x, dt.Size())
			var abs, plain float64
			for i := range n {
				v := device.Get(dt, x, i)
				abs += math.Abs(v)
				plain += v
			}
			if !dt.IsFloat() {
				plain = kernels.Sum(dt, x) // modulo 2^64, which a float64 loop is not
			}
			what := fmt.Sprintf("%s n=%d", dt, n)
			// The reference adds in the kernels' order: the same bits.
			sum, err := g.Sum(dt, xd.ptr(), n, scratch, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := kernels.Sum(dt, x); math.Float64bits(sum) != math.Float64bits(want) {
				t.Errorf("Sum %s: %v, the Go reference gives %v", what, sum, want)
			}
			if math.Abs(sum-plain) > 1e-10*abs {
				t.Errorf("Sum %s: %v, a float64 loop gives %v", what, sum, plain)
			}
			norm, err := g.Norm(dt, xd.ptr(), n, scratch, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := kernels.Norm(dt, x); math.Float64bits(norm) != math.Float64bits(want) {
				t.Errorf("Norm %s: %v, the Go reference gives %v", what, norm, want)
			}
			// y differs from x in scattered places, specials included.
			y := append([]byte(nil), x...)
			for range 1 + n/50 {
				i := rng.IntN(n)
				copy(y[i*dt.Size():], hostileValues(rng, dt, 1))
			}
			yd := place(t, b, y, 0)
			mad, err := g.MaxAbsDiff(dt, xd.ptr(), yd.ptr(), n, scratch, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := kernels.MaxAbsDiff(dt, x, y); mad != want && !(math.IsNaN(mad) && math.IsNaN(want)) {
				t.Errorf("MaxAbsDiff %s: %v, the Go reference gives %v", what, mad, want)
			}
			xd.read(t, what)
		}
	}
}

// spreadValues are n finite elements of dt over many binades (a few for
// float16), so that a sum in float64 rounds, and another order than the
// reference's would round differently.
func spreadValues(rng *rand.Rand, dt device.DType, n int) []byte {
	x := make([]byte, n*dt.Size())
	spread := map[device.DType]int{device.Float64: 30, device.Float32: 60, device.BFloat16: 60, device.Float16: 6}[dt]
	for i := range n {
		switch {
		case dt == device.Uint8:
			device.Set(dt, x, i, float64(rng.IntN(256)))
		case !dt.IsFloat():
			device.Set(dt, x, i, float64(rng.IntN(2_000_001)-1_000_000))
		default:
			device.Set(dt, x, i, (rng.Float64()*2-1)*math.Pow(2, float64(rng.IntN(2*spread+1)-spread)))
		}
	}
	return x
}

// TestGPUReductionsGiveTheCPUBackendsBits: sizes around a vector (16
// bytes), a row of a block's threads, a block's share
// (kernels.ReducePerBlock elements) and the largest grid
// (kernels.ReduceMaxBlocks blocks), from aligned arrays (16-byte loads)
// and from views one element in (one element at a time).
func TestGPUReductionsGiveTheCPUBackendsBits(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	scratch := reduceScratch(t, b)
	for _, dt := range device.DTypes {
		lanes := 16 / dt.Size()
		row, per, full := kernels.ReduceThreads*lanes, kernels.ReducePerBlock, kernels.ReducePerBlock*kernels.ReduceMaxBlocks
		sizes := []int{1, 2, lanes - 1, lanes, lanes + 1, row - 1, row + 1, per - 1, per, per + 1,
			per*5 + lanes/2, 1<<20 + 3}
		if dt == device.Float32 || dt == device.Float64 || dt == device.Int32 {
			sizes = append(sizes, full-1, full+lanes+1)
		}
		for _, n := range sizes {
			if n < 1 {
				continue
			}
			x := spreadValues(rng, dt, n)
			// y differs from x at one place, near the end: the largest
			// difference must be found wherever the element falls. A
			// float is negated (x's floats span so many binades that
			// adding a small number could change nothing), an integer
			// moved by 50.
			y := append([]byte(nil), x...)
			at := n - 1 - rng.IntN(min(n, 7))
			switch v := device.Get(dt, x, at); {
			case dt.IsFloat() && v != 0:
				device.Set(dt, y, at, -v)
			case v < 100:
				device.Set(dt, y, at, v+50)
			default:
				device.Set(dt, y, at, v-50)
			}
			for _, shift := range []int{0, dt.Size()} {
				xd, yd := place(t, b, x, shift), place(t, b, y, shift)
				what := fmt.Sprintf("%s n=%d at byte %d of a 16-byte line", dt, n, (guard+shift)%16)
				sum, err := g.Sum(dt, xd.ptr(), n, scratch, 0)
				if want := kernels.Sum(dt, x); err != nil || math.Float64bits(sum) != math.Float64bits(want) {
					t.Errorf("Sum %s: %v (%v), the CPU backend gives %v", what, sum, err, want)
				}
				norm, err := g.Norm(dt, xd.ptr(), n, scratch, 0)
				if want := kernels.Norm(dt, x); err != nil || math.Float64bits(norm) != math.Float64bits(want) {
					t.Errorf("Norm %s: %v (%v), the CPU backend gives %v", what, norm, err, want)
				}
				mad, err := g.MaxAbsDiff(dt, xd.ptr(), yd.ptr(), n, scratch, 0)
				if want := kernels.MaxAbsDiff(dt, x, y); err != nil || mad != want || want == 0 {
					t.Errorf("MaxAbsDiff %s: %v (%v), the CPU backend gives %v", what, mad, err, want)
				}
				xd.read(t, what)
				yd.read(t, what)
			}
		}
	}
}

func TestGPUReductionsPropagateNaNAndAreDeterministic(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	scratch := reduceScratch(t, b)
	const n = 1 << 20
	x := finite(device.Float32, hostileValues(rng, device.Float32, n))
	xd := place(t, b, x, 0)
	first, _ := g.Sum(device.Float32, xd.ptr(), n, scratch, 0)
	for range 3 {
		again, err := g.Sum(device.Float32, xd.ptr(), n, scratch, 0)
		if err != nil || math.Float64bits(again) != math.Float64bits(first) {
			t.Fatalf("Sum of the same array gave %v then %v (%v)", first, again, err)
		}
	}
	device.Set(device.Float32, x, n-3, math.NaN())
	nd := place(t, b, x, 0)
	for _, f := range []func() (float64, error){
		func() (float64, error) { return g.Sum(device.Float32, nd.ptr(), n, scratch, 0) },
		func() (float64, error) { return g.Norm(device.Float32, nd.ptr(), n, scratch, 0) },
		func() (float64, error) { return g.MaxAbsDiff(device.Float32, xd.ptr(), nd.ptr(), n, scratch, 0) },
	} {
		if v, err := f(); err != nil || !math.IsNaN(v) {
			t.Errorf("a reduction over a NaN gave %v, %v", v, err)
		}
	}
	for _, f := range []func() (float64, error){
		func() (float64, error) { return g.Sum(device.Float32, 0, 0, 0, 0) },
		func() (float64, error) { return g.Norm(device.Float32, 0, 0, 0, 0) },
		func() (float64, error) { return g.MaxAbsDiff(device.Float32, 0, 0, 0, 0, 0) },
	} {
		if v, err := f(); v != 0 || err != nil {
			t.Errorf("a reduction over nothing gave %v, %v", v, err)
		}
	}
}

func TestGPUKernelsCompileOncePerDevice(t *testing.T) {
	b := cudatest.Load(t, cuda.Config{KernelCache: "off"})
	g := kernels.NewGPU(b)
	rng := newRand(t)
	const n = 1000
	y := place(t, b, hostileValues(rng, device.Float32, n), 0)
	x := place(t, b, hostileValues(rng, device.Float32, n), 0)
	for range 3 {
		if err := g.Axpy(device.Float32, y.ptr(), 2, x.ptr(), n, 0); err != nil {
			t.Fatal(err)
		}
		if err := g.Add(device.Float64, y.ptr(), x.ptr(), n/2, 0); err != nil {
			t.Fatal(err)
		}
	}
	// axpy and add are a module each (elementwise/<name>), each compiled once
	if st := b.KernelStats(); st.Compiles != 2 {
		t.Errorf("six launches of two modules compiled %d times", st.Compiles)
	}
	// A second GPU on the same backend reuses the backend's module.
	if err := kernels.NewGPU(b).Axpy(device.Float32, y.ptr(), 2, x.ptr(), n, 0); err != nil {
		t.Fatal(err)
	}
	if st := b.KernelStats(); st.Compiles != 2 {
		t.Errorf("a second GPU compiled again: %+v", st)
	}
}

func TestGPUArgumentsAreCheckedBeforeLaunching(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	p, _ := b.Alloc(4096)
	defer b.Free(p, 4096)
	for name, err := range map[string]error{
		"invalid dtype":      g.Scale(device.Invalid, p, 1, 10, 0),
		"negative count":     g.Add(device.Float32, p, p, -1, 0),
		"null pointer":       g.Axpy(device.Float32, p, 1, 0, 10, 0),
		"misaligned pointer": g.Mul(device.Float32, p+2, p, 10, 0),
		"misaligned source":  g.Copy(device.Float32, p, device.Int64, p+4, 10, 0),
		"rand of ints":       g.Rand(device.Uint8, p, 1, 0, 10, 0),
		"randn of ints":      g.RandN(device.Int32, p, 1, 0, 10, 0),
		"fraction for int32": g.Scale(device.Int32, p, 1.5, 10, 0),
		"NaN for uint8":      g.Elementwise(kernels.LookupElementwise("add_scalar"), device.Uint8, p, math.NaN(), 0, 10, 0),
		"2^63 for int64":     g.Axpy(device.Int64, p, 0x1p63, p+256, 10, 0),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "kernels.") {
			t.Errorf("%s: %v, want an error naming the kernel", name, err)
		}
	}
	if _, err := g.Sum(device.Float32, p, 10, 0, 0); err == nil || !strings.Contains(err.Error(), "scratch") {
		t.Errorf("Sum without scratch: %v", err)
	}
	if err := g.Fill(device.Float32, 0, 1, 0, 0); err != nil {
		t.Errorf("n = 0 is not a no-op: %v", err)
	}
}

// TestGPUIntegerKernelsMatchTheGoReferenceAtTheLimits runs every kernel of
// the table, Sum and MaxAbsDiff on the integer dtypes, with values and
// numbers near each dtype's limits, where sums, differences and products
// wrap, quotients floor, and division by zero and the smallest value over
// -1 would trap in plain C: the bits of the Go reference, which
// TestIntegerKernelsMatchNumPyNearTheLimits holds to NumPy.
func TestGPUIntegerKernelsMatchTheGoReferenceAtTheLimits(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	for _, dt := range []device.DType{device.Int32, device.Int64, device.Uint8} {
		for _, n := range []int{1, 33, 4099, 100003} {
			for _, shift := range []int{0, dt.Size()} { // the 16-byte path, then the scalar one
				for _, op := range kernels.ElementwiseOps() {
					for _, a := range kernels.IntScalars {
						if op.Scalar == "" && a != 0 {
							continue // a is ignored
						}
						if op.Scalar != "" && n > 4099 && rng.IntN(4) != 0 {
							continue // the largest arrays take a sample of the numbers
						}
						y, x := kernels.NearIntLimits(rng, dt, n), kernels.NearIntLimits(rng, dt, n)
						if rng.IntN(8) == 0 {
							// Division by zero and by -1 everywhere.
							for i := range n {
								x[i*dt.Size()] = []byte{0, 0xff}[i%2]
								for k := 1; k < dt.Size(); k++ {
									x[i*dt.Size()+k] = x[i*dt.Size()]
								}
							}
						}
						yd, xd := place(t, b, y, shift), place(t, b, x, shift)
						want := append([]byte(nil), y...)
						xarg, xptr := x, xd.ptr()
						if op.Arrays == 1 {
							xarg, xptr = nil, 0
						}
						op.Apply(dt, want, a, xarg)
						what := fmt.Sprintf("%s %s n=%d shift=%d a=%v", op.Name, dt, n, shift, a)
						if err := g.Elementwise(op, dt, yd.ptr(), a, xptr, n, 0); err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						if got := yd.read(t, what); !bytes.Equal(got, want) {
							i, _ := sameElements(dt, got, want)
							t.Errorf("%s: element %d is %d, the Go reference gives %d from y=%d x=%d", what, i,
								kernels.IntAt(dt, got, i), kernels.IntAt(dt, want, i), kernels.IntAt(dt, y, i), kernels.IntAt(dt, x, i))
						}
					}
				}
			}
		}
	}
}

// TestGPUIntegerReductionsAreExact sums integers that wrap past int64's
// range and differences as large as 2^64 - 1: the GPU's results are the
// Go reference's exactly.
func TestGPUIntegerReductionsAreExact(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	rng := newRand(t)
	scratch := reduceScratch(t, b)
	for _, dt := range []device.DType{device.Int32, device.Int64, device.Uint8} {
		for _, n := range []int{1, 2, 255, 2049, 300001, 3000017} {
			x, y := kernels.NearIntLimits(rng, dt, n), kernels.NearIntLimits(rng, dt, n)
			if dt == device.Int64 && n > 1 {
				// The largest int64 twice: the sum wraps. The smallest
				// against the largest: a difference of 2^64 - 1.
				copy(x, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
				copy(y, []byte{0, 0, 0, 0, 0, 0, 0, 0x80})
			}
			xd, yd := place(t, b, x, dt.Size()), place(t, b, y, 0)
			what := fmt.Sprintf("%s n=%d", dt, n)
			sum, err := g.Sum(dt, xd.ptr(), n, scratch, 0)
			if want := kernels.Sum(dt, x); err != nil || sum != want {
				t.Errorf("Sum %s: %v (%v), the Go reference gives %v", what, sum, err, want)
			}
			mad, err := g.MaxAbsDiff(dt, xd.ptr(), yd.ptr(), n, scratch, 0)
			if want := kernels.MaxAbsDiff(dt, x, y); err != nil || mad != want {
				t.Errorf("MaxAbsDiff %s: %v (%v), the Go reference gives %v", what, mad, err, want)
			}
		}
	}
}

// float32 -> float16 on the device rounds as device.Float16Bits for every
// exponent, sign and both ends of every rounding interval: each upper
// 19-bit pattern with the 13 bits float16 drops set to below, at and above
// half, and the ends (every tie, every overflow into infinity, every
// subnormal result, and NaNs with payloads).
func TestGPUFloat32ToFloat16RoundsAsTheGoReferenceForEveryExponent(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	lows := []uint32{0, 1, 0x0fff, 0x1000, 0x1001, 0x1fff}
	n := (1 << 19) * len(lows)
	src := make([]byte, 4*n)
	for hi := range uint32(1 << 19) {
		for j, lo := range lows {
			binary.LittleEndian.PutUint32(src[4*(int(hi)*len(lows)+j):], hi<<13|lo)
		}
	}
	x := place(t, b, src, 0)
	y := place(t, b, make([]byte, 2*n), 0)
	if err := g.Copy(device.Float16, y.ptr(), device.Float32, x.ptr(), n, 0); err != nil {
		t.Fatal(err)
	}
	got := y.read(t, "float32 -> float16")
	bad := 0
	for i := range n {
		f := math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		if g, w := binary.LittleEndian.Uint16(got[2*i:]), device.Float16Bits(f); g != w {
			if bad++; bad <= 10 {
				t.Errorf("float32 %#08x (%g) -> float16 %#04x on the device, %#04x in Go", math.Float32bits(f), f, g, w)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d values in all", bad)
	}
}

// float16 -> float32 on the device is exact for all 65536 bit patterns,
// as device.Float16Value: subnormals, both zeros, both infinities, and
// NaNs with their sign and payload, quiet or signalling.
func TestGPUFloat16ToFloat32DecodesEveryBitPatternAsTheGoReference(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	const n = 1 << 16
	src := make([]byte, 2*n)
	for h := range n {
		binary.LittleEndian.PutUint16(src[2*h:], uint16(h))
	}
	x := place(t, b, src, 0)
	y := place(t, b, make([]byte, 4*n), 0)
	if err := g.Copy(device.Float32, y.ptr(), device.Float16, x.ptr(), n, 0); err != nil {
		t.Fatal(err)
	}
	got := y.read(t, "float16 -> float32")
	bad := 0
	for h := range n {
		if g, w := binary.LittleEndian.Uint32(got[4*h:]), math.Float32bits(device.Float16Value(uint16(h))); g != w {
			if bad++; bad <= 10 {
				t.Errorf("float16 %#04x -> float32 %#08x on the device, %#08x in Go", h, g, w)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d patterns in all", bad)
	}
}

// float16, bfloat16 and float32 copied into float64 on the device are
// exact, as Go's float64 of device.Float16Value, BFloat16Value and a
// float32 (kernels.Copy): every one of the 65536 patterns of each half
// type (subnormals, both zeros, both infinities), and NaNs of float32,
// each with its sign and payload and quieted.
func TestGPUFloatsCopiedIntoFloat64AreGosValues(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	halves := make([]byte, 2<<16)
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(halves[2*h:], uint16(h))
	}
	var singles []byte
	for _, v := range []uint32{0x7f800001, 0xff812345, 0x7fc00001, 0xffffffff, 0x7f800000, 0x3fc00000, 1} {
		singles = binary.LittleEndian.AppendUint32(singles, v)
	}
	for _, c := range []struct {
		dt    device.DType
		src   []byte
		value func(i int) float64
	}{
		{device.Float16, halves, func(i int) float64 { return float64(device.Float16Value(uint16(i))) }},
		{device.BFloat16, halves, func(i int) float64 { return float64(device.BFloat16Value(uint16(i))) }},
		{device.Float32, singles, func(i int) float64 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(singles[4*i:])))
		}},
	} {
		n := len(c.src) / c.dt.Size()
		x := place(t, b, c.src, 0)
		y := place(t, b, make([]byte, 8*n), 0)
		if err := g.Copy(device.Float64, y.ptr(), c.dt, x.ptr(), n, 0); err != nil {
			t.Fatal(err)
		}
		got := y.read(t, c.dt.String()+" -> float64")
		bad := 0
		for i := range n {
			if g, w := binary.LittleEndian.Uint64(got[8*i:]), math.Float64bits(c.value(i)); g != w {
				if bad++; bad <= 10 {
					t.Errorf("%s element %d -> float64 %#016x on the device, %#016x in Go", c.dt, i, g, w)
				}
			}
		}
		if bad > 10 {
			t.Errorf("... %d %s elements in all", bad, c.dt)
		}
	}
}

// float16 kernels load a vector with no NaN by the device's conversion
// alone, and one with a NaN as before: every one of the 65536 patterns,
// added to its negation (inf - inf among them) and to a scattering of
// the others, NaN-free vectors beside vectors with NaNs of every payload,
// gives the Go reference's bits.
func TestGPUFloat16AddOfEveryPatternIsTheGoReferences(t *testing.T) {
	b := gpu(t)
	g := kernels.NewGPU(b)
	add := kernels.LookupElementwise("add")
	const n = 1 << 16
	y := make([]byte, 2*n)
	for h := range n {
		binary.LittleEndian.PutUint16(y[2*h:], uint16(h))
	}
	for name, partner := range map[string]func(h int) uint16{
		"negation":  func(h int) uint16 { return uint16(h) ^ 0x8000 },
		"scattered": func(h int) uint16 { return uint16(h * 40503) },
	} {
		x := make([]byte, 2*n)
		for h := range n {
			binary.LittleEndian.PutUint16(x[2*h:], partner(h))
		}
		yd, xd := place(t, b, y, 0), place(t, b, x, 0)
		if err := g.Elementwise(add, device.Float16, yd.ptr(), 0, xd.ptr(), n, 0); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), y...)
		add.Apply(device.Float16, want, 0, x)
		checkSame(t, "float16 add, each pattern and its "+name, device.Float16, yd.read(t, name), want, nil)
	}
}
