package runtime

import (
	"fmt"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/kernels"
)

// span is an array's memory as the executors see it: contiguous elements of
// one dtype.
type span struct {
	ptr   device.Ptr
	n     int
	dtype device.DType
}

func (s span) nbytes() uint64 { return uint64(s.n) * uint64(s.dtype.Size()) }

func (a *Array) span() span { return span{ptr: a.ptr(), n: a.size, dtype: a.dtype} }

// executor runs the built-in kernels on one kind of backend. The runtime has
// already checked shapes, dtypes and liveness.
type executor interface {
	fill(x span, v float64) error
	// elementwise runs op from y and x into out, which is y itself or
	// shares no memory with y and x; x is the zero span for a one-array
	// kernel.
	elementwise(op *kernels.ElementwiseOp, out, y span, a float64, x span) error
	copy(dst, src span) error
	sum(x span) (float64, error)
	norm(x span) (float64, error)
	maxAbsDiff(x, y span) (float64, error)
	// rand and randn fill x from the counters offset, offset+1, ... of
	// the generator seeded with seed (kernels.Rand, kernels.RandN).
	rand(x span, seed, offset uint64) error
	randn(x span, seed, offset uint64) error
}

func newExecutor(rt *Runtime, b Backend) (executor, error) {
	if h, ok := b.(HostMemory); ok {
		return hostExec{rt, h}, nil
	}
	if d, ok := b.(kernels.Device); ok {
		return newDeviceExec(rt, d), nil
	}
	return nil, fmt.Errorf("backend %s can run no kernels", b.Name())
}

// hostExec runs the kernels package's Go implementations directly on the
// memory of a host backend, through onHost, so that a graph being
// captured records the kernels that write arrays instead of running them.
type hostExec struct {
	rt  *Runtime
	mem HostMemory
}

func (h hostExec) bytes(s span) []byte { return h.mem.Bytes(s.ptr, s.nbytes()) }

func (h hostExec) fill(x span, v float64) error {
	xb := h.bytes(x)
	return h.rt.onHost(h.rt.streams.own, func() error {
		kernels.Fill(x.dtype, xb, v)
		return nil
	}, x.writes("output"))
}

func (h hostExec) elementwise(op *kernels.ElementwiseOp, out, y span, a float64, x span) error {
	var xb []byte
	if op.Arrays == 2 {
		xb = h.bytes(x)
	}
	ob, yb := h.bytes(out), h.bytes(y)
	uses := []device.Access{y.reads("first operand"), out.writes("output")}
	if op.Arrays == 2 {
		uses = append(uses, x.reads("second operand"))
	}
	return h.rt.onHost(h.rt.streams.own, func() error {
		op.ApplyTo(y.dtype, ob, yb, a, xb)
		return nil
	}, uses...)
}

func (h hostExec) copy(dst, src span) error {
	db, sb := h.bytes(dst), h.bytes(src)
	return h.rt.onHost(h.rt.streams.own, func() error {
		kernels.Copy(dst.dtype, db, src.dtype, sb)
		return nil
	}, src.reads("source"), dst.writes("destination"))
}

func (h hostExec) sum(x span) (float64, error) {
	xb := h.bytes(x)
	return h.rt.hostReduce(func() float64 { return kernels.Sum(x.dtype, xb) }, x.reads("x"))
}

func (h hostExec) norm(x span) (float64, error) {
	xb := h.bytes(x)
	return h.rt.hostReduce(func() float64 { return kernels.Norm(x.dtype, xb) }, x.reads("x"))
}

func (h hostExec) maxAbsDiff(x, y span) (float64, error) {
	xb, yb := h.bytes(x), h.bytes(y)
	return h.rt.hostReduce(func() float64 { return kernels.MaxAbsDiff(x.dtype, xb, yb) }, x.reads("x"), y.reads("y"))
}

// hostReduce runs f, a reduction to a number of a host backend's memory,
// as a GPU runs one: queued on the runtime's stream, reading uses, and
// then read back by a host that waits for that stream. The CPU backend
// then refuses a reduction of bytes that another stream's work writes
// with nothing ordering the two, where a GPU would sum them half written.
// Reductions are refused in a capture before they come here.
func (rt *Runtime) hostReduce(f func() float64, uses ...device.Access) (float64, error) {
	var v float64
	own := rt.streams.own
	if err := rt.onHost(own, func() error { v = f(); return nil }, uses...); err != nil {
		return 0, err
	}
	return v, rt.backend.StreamSynchronize(own)
}

func (h hostExec) rand(x span, seed, offset uint64) error {
	xb := h.bytes(x)
	return h.rt.onHost(h.rt.streams.own, func() error { return kernels.Rand(x.dtype, xb, seed, offset) }, x.writes("output"))
}

func (h hostExec) randn(x span, seed, offset uint64) error {
	xb := h.bytes(x)
	return h.rt.onHost(h.rt.streams.own, func() error { return kernels.RandN(x.dtype, xb, seed, offset) }, x.writes("output"))
}

// onHost runs op, work of a host backend's kernels on its memory, queued
// on stream s: now, or, while s records a graph, at each of its launches.
// op must hold everything it reads (memory views, numbers) from the
// moment it was queued: a replay may come after the arrays are freed,
// when the graph alone keeps their memory.
func (rt *Runtime) onHost(s device.Stream, op func() error, uses ...device.Access) error {
	if q, ok := rt.backend.(HostQueue); ok {
		return q.Run(s, op, uses...)
	}
	return op()
}

// reads and writes are x's memory as a kernel's use of it.
func (s span) reads(what string) device.Access {
	return device.Access{What: what, P: s.ptr, N: s.nbytes()}
}

func (s span) writes(what string) device.Access {
	return device.Access{What: what, P: s.ptr, N: s.nbytes(), Write: true}
}
