package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/gluaproject/glua/device"
)

// LaunchFunc launches one compiled kernel with grid and block dimensions,
// bytes of dynamic shared memory, a stream and the kernel's arguments.
type LaunchFunc = func(grid, block [3]uint32, shared uint32, s device.Stream, args ...any) error

// Device is what the GPU kernels need from a backend. *cuda.Backend
// satisfies it; kernels does not import cuda.
type Device interface {
	// Launcher compiles CUDA C source (once) and returns a launcher for
	// its kernel entry.
	Launcher(source, name string, options []string, entry string) (LaunchFunc, error)
	// Copy copies nbytes on the device, ordered on s.
	Copy(dst, src device.Ptr, nbytes uint64, s device.Stream) error
	// Download copies len(dst) bytes to the host and returns when done.
	Download(dst []byte, src device.Ptr, s device.Stream) error
}

// hostWords is an optional ability of a Device: words of host memory a
// kernel writes directly, so that a reduction's result needs no copy back
// (*cuda.Backend; see TakeHostWord there).
type hostWords interface {
	TakeHostWord(s device.Stream) (slot int, dev device.Ptr, err error)
	ReadHostWord(slot int, s device.Stream) (uint64, error)
	ReleaseHostWord(slot int)
}

// GPU runs the built-in kernels on a CUDA device. It is the launch side of
// the CUDA C in *.cu: the runtime makes one GPU per backend with NewGPU and
// calls its methods with device pointers, element counts and a stream. The
// results equal the Go implementations in this package bit for bit: the
// reductions' Go references combine the elements in the kernels' order.
//
//	g := kernels.NewGPU(backend)              // *cuda.Backend is a Device
//	err := g.Axpy(device.Float32, y, 2.5, x, n, stream)
//	scratch := pool.Alloc(kernels.ReduceScratchBytes(n))
//	s, err := g.Sum(device.Float32, x, n, scratch, stream)
//
// Arguments follow the Go implementations (destination first, then
// scalars and sources), then the element count n, then scratch for the
// reductions, then the stream. Work is queued on the stream; the
// reductions wait for their result. Every method checks its arguments
// first: an invalid dtype, a negative count, a null or misaligned pointer,
// a number that is not an integer for an integer dtype's elementwise
// kernel is an error that names the kernel, never a launch. n = 0 does nothing
// (and Sum, Norm and MaxAbsDiff return 0).
//
// Each kernel module is compiled on first use and its launchers are kept
// in the GPU, so the compile (or the disk-cache load) happens once per
// device.
type GPU struct {
	dev Device
	sms int // the device's multiprocessors, for ElementwiseShape
	// the device's compute capability where the Device can set a
	// carveout, for ElementwiseResidency; zero where it cannot
	residencyCC [2]int

	mu   sync.Mutex
	fns  map[string]LaunchFunc // by entry point name
	elem map[elemKey]LaunchFunc
}

// elemKey names an elementwise kernel without building its entry point's
// name, which a tiny kernel's launch would otherwise pay for every time.
type elemKey struct {
	op *ElementwiseOp
	dt device.DType
}

// NewGPU returns a GPU that launches on d.
func NewGPU(d Device) *GPU {
	g := &GPU{dev: d, fns: map[string]LaunchFunc{}, elem: map[elemKey]LaunchFunc{}}
	// The device's description is an optional ability of a Device; one
	// that has none gets ElementwiseShape's default.
	if info, ok := d.(interface{ Info() (device.Info, error) }); ok {
		if i, err := info.Info(); err == nil {
			g.sms = i.Multiprocessors
			if _, ok := d.(Carveouts); ok {
				g.residencyCC = i.ComputeCapability
			}
		}
	}
	return g
}

// Carveouts is an optional ability of a Device (*cuda.Backend): a
// launcher whose kernel prefers percent of each multiprocessor's unified
// L1 and shared memory as shared memory.
type Carveouts interface {
	LauncherWithCarveout(source, name string, options []string, entry string, percent int) (LaunchFunc, error)
}

const (
	threadsPerBlock = 256
	// maxBlocks bounds the grid of random numbers, whose loops stride
	// over the rest: 8192 blocks of 256 threads fill any current GPU
	// several times over. Fill, conversions and the kernels of the
	// elementwise table have shapes of their own (shape.go).
	maxBlocks = 8192
	// Reductions use a grid that depends on n only, so that the order of
	// summation, and the result, does not depend on the device; the CPU
	// backend's reference (blockedSum) follows the same order. Each block
	// takes at least reducePerBlock elements, and there are at most
	// reduceMaxBlocks partials, which one block of reduceFinishThreads
	// threads combines. reduceThreads, reduceAccumulators and
	// reduceFinishThreads are reduce.cu's GLUA_REDUCE_THREADS,
	// GLUA_REDUCE_ACCS and GLUA_FINISH_THREADS.
	reduceThreads       = 256
	reduceAccumulators  = 2
	reducePerBlock      = 2048
	reduceMaxBlocks     = 4096
	reduceFinishThreads = 1024
)

// ReduceScratchBytes is the device memory Sum, Norm and MaxAbsDiff need as
// scratch for n elements: 8 bytes per block (a float64, or an integer
// dtype's 64-bit partial) plus the result. It is at most
// 8*(reduceMaxBlocks+1) bytes; a buffer of that size serves every n.
func ReduceScratchBytes(n int) uint64 {
	return 8 * uint64(reduceBlocks(n)+1)
}

// reduceBlocks is the reductions' grid for n elements, on both backends.
func reduceBlocks(n int) int {
	b := (n + reducePerBlock - 1) / reducePerBlock
	return min(max(b, 1), reduceMaxBlocks)
}

func gridFor(items int) [3]uint32 {
	b := (items + threadsPerBlock - 1) / threadsPerBlock
	return [3]uint32{uint32(min(max(b, 1), maxBlocks)), 1, 1}
}

var block1D = [3]uint32{threadsPerBlock, 1, 1}

// fn returns the launcher of entry in module, compiling it on first use.
func (g *GPU) fn(module, entry string) (LaunchFunc, error) {
	return g.fnCarveout(module, entry, 0)
}

// fnCarveout is fn for a kernel that prefers a shared memory carveout of
// percent (Carveouts), where percent is above 0. An entry is always asked
// for with the same carveout.
func (g *GPU) fnCarveout(module, entry string, percent int) (LaunchFunc, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.fns[entry]; f != nil {
		return f, nil
	}
	source, name, err := cudaSource(module)
	if err != nil {
		return nil, err
	}
	var f LaunchFunc
	if c, ok := g.dev.(Carveouts); ok && percent > 0 {
		f, err = c.LauncherWithCarveout(source, name, cudaOptions, entry, percent)
	} else {
		f, err = g.dev.Launcher(source, name, cudaOptions, entry)
	}
	if err != nil {
		return nil, err
	}
	g.fns[entry] = f
	return f, nil
}

// residency is op's ElementwiseResidency on g's device: the arrays it
// reads are its Arrays.
func (g *GPU) residency(op *ElementwiseOp) (shared uint32, carveout int) {
	return ElementwiseResidency(g.residencyCC, op.Arrays)
}

// elementwiseFn is op's launcher for dt.
func (g *GPU) elementwiseFn(op *ElementwiseOp, dt device.DType) (LaunchFunc, error) {
	k := elemKey{op, dt}
	g.mu.Lock()
	f := g.elem[k]
	g.mu.Unlock()
	if f != nil {
		return f, nil
	}
	_, carveout := g.residency(op)
	f, err := g.fnCarveout("elementwise/"+op.Name, "glua_"+op.Name+"_"+dt.String(), carveout)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.elem[k] = f
	g.mu.Unlock()
	return f, nil
}

// check validates a dtype, a count and the operands' pointers.
func check(op string, dt device.DType, n int, ptrs ...device.Ptr) error {
	if !dt.Valid() {
		return fmt.Errorf("kernels.%s: invalid dtype %s", op, dt)
	}
	if n < 0 {
		return fmt.Errorf("kernels.%s: negative element count %d", op, n)
	}
	if n == 0 {
		return nil
	}
	for _, p := range ptrs {
		if p == 0 {
			return fmt.Errorf("kernels.%s: null device pointer", op)
		}
		if uint64(p)%uint64(dt.Size()) != 0 {
			return fmt.Errorf("kernels.%s: pointer %#x is not aligned to a %s element (%d bytes)", op, uint64(p), dt, dt.Size())
		}
	}
	return nil
}

// vectorizable says whether every pointer allows the 16-byte path.
func vectorizable(ptrs ...device.Ptr) int32 {
	for _, p := range ptrs {
		if p%16 != 0 {
			return 0
		}
	}
	return 1
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("kernels.%s: %w", op, err)
}

// Fill sets n elements at x to v, converted as device.Set converts it.
func (g *GPU) Fill(dt device.DType, x device.Ptr, v float64, n int, s device.Stream) error {
	if err := check("Fill", dt, n, x); err != nil || n == 0 {
		return err
	}
	// The element's bits, computed here once, repeated into a 16-byte
	// pattern the kernel stores.
	elem := make([]byte, 8)
	device.Set(dt, elem, 0, v)
	var lo, hi uint64
	for i := 15; i >= 0; i-- {
		b := uint64(elem[i%dt.Size()])
		if i >= 8 {
			hi = hi<<8 | b
		} else {
			lo = lo<<8 | b
		}
	}
	f, err := g.fn("elementwise", "glua_fill")
	if err != nil {
		return wrap("Fill", err)
	}
	nbytes := n * dt.Size()
	grid, block := FillShape(nbytes)
	return wrap("Fill", f(grid, block, 0, s, x, uint64(nbytes), lo, hi))
}

// Elementwise runs op on n elements in place: y = f(y, x, a), or for a
// one-array kernel y = f(y, a), when x is ignored.
func (g *GPU) Elementwise(op *ElementwiseOp, dt device.DType, y device.Ptr, a float64, x device.Ptr, n int, s device.Stream) error {
	return g.ElementwiseTo(op, dt, y, y, a, x, n, s)
}

// ElementwiseTo runs op on n elements into out, leaving y as it was: out =
// f(y, x, a), or out = f(y, a) for a one-array kernel. out is y itself or
// shares no byte with y and x. On an integer dtype a must be an integer
// of magnitude below 2^63 (IntegerScalar); another is an error.
func (g *GPU) ElementwiseTo(op *ElementwiseOp, dt device.DType, out, y device.Ptr, a float64, x device.Ptr, n int, s device.Stream) error {
	name := op.goName
	ptrs := []device.Ptr{out, y, x}[:op.Arrays+1]
	if err := check(name, dt, n, ptrs...); err != nil {
		return err
	}
	// The entry points take the number as the dtype's A (dtypes.cu): a
	// double for a float dtype, an int64 for an integer one.
	var arg any = a
	if !dt.IsFloat() {
		ia, err := op.intScalar(dt, a)
		if err != nil {
			return err
		}
		arg = ia
	}
	if n == 0 {
		return nil
	}
	f, err := g.elementwiseFn(op, dt)
	if err != nil {
		return wrap(name, err)
	}
	vec := vectorizable(ptrs...)
	grid, block := ElementwiseShape(g.sms, n, dt.Size(), vec != 0)
	var shared uint32
	if vec != 0 {
		shared, _ = g.residency(op)
	}
	if op.Arrays == 1 {
		return wrap(name, f(grid, block, shared, s, out, y, int64(n), arg, vec))
	}
	return wrap(name, f(grid, block, shared, s, out, y, x, int64(n), arg, vec))
}

// Scale sets x = a·x on n elements.
func (g *GPU) Scale(dt device.DType, x device.Ptr, a float64, n int, s device.Stream) error {
	return g.Elementwise(scaleOp, dt, x, a, 0, n, s)
}

// Axpy sets y = a·x + y on n elements, the product rounded before the sum.
func (g *GPU) Axpy(dt device.DType, y device.Ptr, a float64, x device.Ptr, n int, s device.Stream) error {
	return g.Elementwise(axpyOp, dt, y, a, x, n, s)
}

// Add sets y = y + x on n elements.
func (g *GPU) Add(dt device.DType, y, x device.Ptr, n int, s device.Stream) error {
	return g.Elementwise(addOp, dt, y, 0, x, n, s)
}

// Mul sets y = y·x on n elements.
func (g *GPU) Mul(dt device.DType, y, x device.Ptr, n int, s device.Stream) error {
	return g.Elementwise(mulOp, dt, y, 0, x, n, s)
}

// copyBitsEntry is convert.cu's bit copy for each element width.
var copyBitsEntry = [9]string{1: "glua_copy_bits_1", 2: "glua_copy_bits_2", 4: "glua_copy_bits_4", 8: "glua_copy_bits_8"}

// Copy converts n elements of src, of dtype srcDT, into dst, of dtype
// dstDT. Equal dtypes copy each element's bits unchanged.
func (g *GPU) Copy(dstDT device.DType, dst device.Ptr, srcDT device.DType, src device.Ptr, n int, s device.Stream) error {
	if err := check("Copy", dstDT, n, dst); err != nil || n == 0 {
		return err
	}
	if err := check("Copy", srcDT, n, src); err != nil {
		return err
	}
	entry := "glua_convert_" + srcDT.String() + "_to_" + dstDT.String()
	if dstDT == srcDT {
		entry = copyBitsEntry[dstDT.Size()]
	}
	f, err := g.fn("convert", entry)
	if err != nil {
		return wrap("Copy", err)
	}
	grid, block := ConvertShape(n, dstDT, srcDT)
	return wrap("Copy", f(grid, block, 0, s, dst, src, int64(n)))
}

// Rand fills n elements at x with uniform values in [0, 1), the same bits
// as the Go Rand for the same seed and offset. Integer dtypes are an error.
func (g *GPU) Rand(dt device.DType, x device.Ptr, seed, offset uint64, n int, s device.Stream) error {
	return g.random("Rand", "glua_rand_", dt, x, seed, offset, n, s)
}

// RandN fills n elements at x with standard normal values, the same bits
// as the Go RandN for the same seed and offset. Integer dtypes are an
// error.
func (g *GPU) RandN(dt device.DType, x device.Ptr, seed, offset uint64, n int, s device.Stream) error {
	return g.random("RandN", "glua_randn_", dt, x, seed, offset, n, s)
}

func (g *GPU) random(op, prefix string, dt device.DType, x device.Ptr, seed, offset uint64, n int, s device.Stream) error {
	items := n
	if op == "RandN" && dt != device.Float64 {
		items = n/2 + 1 // a thread makes a pair of float32 normals
	}
	if err := check(op, dt, n, x); err != nil {
		return err
	}
	if !dt.IsFloat() {
		return fmt.Errorf("kernels.%s: %s is not supported (float32, float64, float16, bfloat16)", op, dt)
	}
	if n == 0 {
		return nil
	}
	f, err := g.fn("rand", prefix+dt.String())
	if err != nil {
		return wrap(op, err)
	}
	return wrap(op, f(gridFor(items), block1D, 0, s, x, int64(n), seed, offset))
}

// Sum is the sum of n elements at x: accumulated in float64 for a float
// dtype, in int64 modulo 2^64 for an integer one (rounded to float64 once,
// the Go reference's bits). scratch holds ReduceScratchBytes(n) bytes of
// device memory.
func (g *GPU) Sum(dt device.DType, x device.Ptr, n int, scratch device.Ptr, s device.Stream) (float64, error) {
	if dt.Valid() && !dt.IsFloat() {
		bits, err := g.reduce("Sum", "glua_isum_", "glua_finish_isum", dt, n, scratch, s, []device.Ptr{x})
		return float64(int64(bits)), err
	}
	return g.sum("Sum", dt, x, n, scratch, 0, s)
}

// Norm is the Euclidean norm of n elements at x, accumulated in float64.
func (g *GPU) Norm(dt device.DType, x device.Ptr, n int, scratch device.Ptr, s device.Stream) (float64, error) {
	sq, err := g.sum("Norm", dt, x, n, scratch, 1, s)
	return math.Sqrt(sq), err
}

func (g *GPU) sum(op string, dt device.DType, x device.Ptr, n int, scratch device.Ptr, square int32, s device.Stream) (float64, error) {
	bits, err := g.reduce(op, "glua_sum_", "glua_finish_sum", dt, n, scratch, s, []device.Ptr{x}, square)
	return floatResult(bits), err
}

// MaxAbsDiff is the largest |x[i] - y[i]| over n elements: NaN if either
// holds a NaN, 0 where values are equal (infinities included); exact for
// an integer dtype, whose largest difference is rounded to float64 once.
func (g *GPU) MaxAbsDiff(dt device.DType, x, y device.Ptr, n int, scratch device.Ptr, s device.Stream) (float64, error) {
	if dt.Valid() && !dt.IsFloat() {
		bits, err := g.reduce("MaxAbsDiff", "glua_maxabsdiff_", "glua_finish_umax", dt, n, scratch, s, []device.Ptr{x, y})
		return float64(bits), err
	}
	bits, err := g.reduce("MaxAbsDiff", "glua_maxabsdiff_", "glua_finish_max", dt, n, scratch, s, []device.Ptr{x, y})
	return floatResult(bits), err
}

// reduce checks the arguments, queues the reduction (queueReduce) and
// returns the 8 bytes of its result, which the caller reads as its type:
// written by the finishing kernel straight into host memory where the
// device has host words, and otherwise left after the partials in scratch
// and downloaded. n = 0 gives 0.
func (g *GPU) reduce(op, prefix, finish string, dt device.DType, n int, scratch device.Ptr, s device.Stream, arrays []device.Ptr, extra ...any) (uint64, error) {
	if err := checkReduce(op, dt, n, scratch, arrays...); err != nil || n == 0 {
		return 0, err
	}
	result := scratch + device.Ptr(8*reduceBlocks(n))
	hw, _ := g.dev.(hostWords)
	slot := -1
	if hw != nil {
		if i, word, err := hw.TakeHostWord(s); err == nil {
			slot, result = i, word
		}
	}
	if err := g.queueReduce(op, prefix, finish, dt, n, scratch, result, s, arrays, extra...); err != nil {
		if slot >= 0 {
			hw.ReleaseHostWord(slot)
		}
		return 0, err
	}
	if slot >= 0 {
		v, err := hw.ReadHostWord(slot, s)
		return v, wrap(op, err)
	}
	var b [8]byte
	if err := g.dev.Download(b[:], result, s); err != nil {
		return 0, wrap(op, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// queueReduce launches the partial reduction prefix<dtype>(arrays..., n,
// extra..., vec, partials) over n > 0 elements and then finish over the
// partials, which writes the result's 8 bytes at result; it waits for
// neither.
func (g *GPU) queueReduce(op, prefix, finish string, dt device.DType, n int, scratch, result device.Ptr, s device.Stream, arrays []device.Ptr, extra ...any) error {
	partial, err := g.fn("reduce", prefix+dt.String())
	if err != nil {
		return wrap(op, err)
	}
	f, err := g.fn("reduce", finish)
	if err != nil {
		return wrap(op, err)
	}
	blocks := reduceBlocks(n)
	var args []any
	vec := int32(1) // every array 16-byte aligned: whole vectors load at once
	for _, p := range arrays {
		args = append(args, p)
		if p%16 != 0 {
			vec = 0
		}
	}
	args = append(append(append(args, int64(n)), extra...), vec, scratch)
	if err := partial([3]uint32{uint32(blocks), 1, 1}, [3]uint32{reduceThreads, 1, 1}, 0, s, args...); err != nil {
		return wrap(op, err)
	}
	return wrap(op, f([3]uint32{1, 1, 1}, [3]uint32{reduceFinishThreads, 1, 1}, 0, s, scratch, int32(blocks), result))
}

// floatResult is a float64 reduction's result from its bits.
func floatResult(bits uint64) float64 { return reducedNaN(math.Float64frombits(bits)) }

func checkReduce(op string, dt device.DType, n int, scratch device.Ptr, ptrs ...device.Ptr) error {
	if err := check(op, dt, n, ptrs...); err != nil || n == 0 {
		return err
	}
	if scratch == 0 || scratch%8 != 0 {
		return fmt.Errorf("kernels.%s: scratch %#x must be a non-null, 8-byte aligned buffer of ReduceScratchBytes(%d) = %d bytes",
			op, uint64(scratch), n, ReduceScratchBytes(n))
	}
	return nil
}
