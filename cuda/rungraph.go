package cuda

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// Where a Lua loop makes launches faster than the driver takes them one
// at a time, they wait in the launch queue (launchqueue.go), and the worker
// gives those waiting to the driver as one graph: a chain of kernel nodes,
// each after the one before, launched on their stream. On the hosts glua
// was measured on a launch costs the driver 4.4 µs of host time, and a run
// of eight as a graph 0.8–1.0 µs a kernel (BENCHMARKS.md).
//
// One executable graph is kept for each stream and length of run: a graph
// launch also waits for the same graph's previous launch, which on another
// stream would tie the two streams together. Before a launch its nodes are
// pointed at the run's kernels, shapes and arguments with
// cuGraphExecKernelNodeSetParams, only where a node holds something else:
// a loop that repeats one launch changes nothing. A graph launch runs after
// the work queued on its stream before it and before the work queued after
// it, so the device sees the run as it would have seen the launches.
//
// A run takes launches on one stream with no more than the default 48 KiB
// of dynamic shared memory. Where the driver refuses a graph call, the
// run's launches are given to it one at a time instead, so that a refused
// launch is reported as itself.

// runGraphs are the backend's graphs for runs of launches. The worker
// holds mu while it issues a run; Module.Close takes it to drop the graphs
// before the module's code goes, and DestroyStream to drop the stream's.
type runGraphs struct {
	mu       sync.Mutex
	byStream map[device.Stream]*[maxRun + 1]*runGraph
	// off is set where the driver cannot build graphs node by node, or
	// built none for launches it then took one at a time.
	off bool
	// fixedKernels is set where the driver refused to change a node's
	// kernel (before CUDA 12 it cannot): a run's graph is then used only
	// for the kernels it was built with.
	fixedKernels bool
	// params and args are the node parameters handed to the driver: on
	// the heap, since the driver gets their addresses as integers.
	params kernelNodeParams
	args   [pooledParams + 1]unsafe.Pointer

	runs, launches atomic.Int64 // issued as graphs
}

// runGraph is a chain of len(nodes) kernel nodes, instantiated.
type runGraph struct {
	graph, exec uintptr
	nodes       []uintptr
	held        []queuedLaunch // what each node of exec launches now
}

// kernelNodeParams is CUDA_KERNEL_NODE_PARAMS_v2; v1 is its first 56
// bytes.
type kernelNodeParams struct {
	fn           uintptr
	grid         [3]uint32
	block        [3]uint32
	shared       uint32
	kernelParams uintptr // void**
	extra        uintptr
	kern         uintptr // CUkernel; 0: fn is used
	ctx          uintptr // CUcontext; 0: the current one
}

// defaultSharedLimit is the dynamic shared memory every kernel may use
// without opting in with cuFuncSetAttribute.
const defaultSharedLimit = 48 << 10

// issueRun is the launch queue's worker's call into the driver (see
// queueDriver), on its thread, with the context current there.
func (b *Backend) issueRun(es []*queuedLaunch, params *[pooledParams + 1]unsafe.Pointer) (int, error) {
	k := runLength(es)
	if k == 1 {
		return 1, b.issueQueued(es[0], params)
	}
	built, ok := b.runs.launch(b, es[:k])
	if ok {
		return k, nil
	}
	for i, e := range es[:k] {
		if err := b.issueQueued(e, params); err != nil {
			return i + 1, err
		}
	}
	if !built {
		// The driver took the launches but no graph of them.
		b.runs.mu.Lock()
		b.runs.off = true
		b.runs.mu.Unlock()
	}
	return k, nil
}

// runLength is how many of es, from the first, can go as one graph: those
// on the first one's stream, up to the first launch on another or one
// with more than the default dynamic shared memory (which a node would
// need the function's opt-in for). It is at least 1.
func runLength(es []*queuedLaunch) int {
	if es[0].shared > defaultSharedLimit {
		return 1
	}
	k := 1
	for k < len(es) && es[k].stream == es[0].stream && es[k].shared <= defaultSharedLimit {
		k++
	}
	return k
}

// hasNodeGraphs says whether the driver can build graphs node by node.
func (d *driverAPI) hasNodeGraphs() bool {
	return d.cuGraphCreate != 0 && d.cuGraphInstantiate != 0 && d.cuGraphLaunch != 0 &&
		d.cuGraphExecDestroy != 0 && d.cuGraphDestroy != 0 &&
		(d.cuGraphAddKernelNode != 0 || d.cuGraphAddKernelNodeV1 != 0) &&
		(d.cuGraphExecKernelNodeSetParams != 0 || d.cuGraphExecKernelNodeSetParamsV1 != 0)
}

// launch gives the driver es as one graph launch and reports whether it
// took them; built is false where the driver would build no graph of them.
func (r *runGraphs) launch(b *Backend, es []*queuedLaunch) (built, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.off {
		return true, false
	}
	sized := r.sized(b, es[0].stream)
	g := sized[len(es)]
	if g != nil && r.fixedKernels {
		for i, e := range es {
			if g.held[i].f != e.f {
				return true, false
			}
		}
	}
	for i, e := range es {
		if g == nil {
			break
		}
		if !g.held[i].sameAs(e) && !r.setNode(b, g, i, e) {
			if g.held[i].f != e.f {
				r.fixedKernels = true
			}
			r.dropOne(b, sized, len(es))
			g = nil
		}
	}
	if g == nil {
		if g = r.build(b, es); g == nil {
			return false, false
		}
		sized[len(es)] = g
	}
	if cuResult(b.drv.cuGraphLaunch.call(g.exec, uintptr(es[0].stream))) != cudaSuccess {
		r.dropOne(b, sized, len(es))
		return true, false
	}
	r.runs.Add(1)
	r.launches.Add(int64(len(es)))
	return true, true
}

// sameAs says whether h launches what e does.
func (h *queuedLaunch) sameAs(e *queuedLaunch) bool {
	if h.f != e.f || h.grid != e.grid || h.block != e.block || h.shared != e.shared || h.n != e.n {
		return false
	}
	for i := range e.n {
		if h.slots[i] != e.slots[i] {
			return false
		}
	}
	return true
}

// nodeParams fills r.params for e.
func (r *runGraphs) nodeParams(e *queuedLaunch) uintptr {
	for i := range e.n {
		r.args[i] = unsafe.Pointer(&e.slots[i])
	}
	r.params = kernelNodeParams{
		fn: e.f.handle, grid: e.grid, block: e.block, shared: e.shared,
		kernelParams: uintptr(unsafe.Pointer(&r.args[0])),
	}
	return uintptr(unsafe.Pointer(&r.params))
}

// setNode points node i of g at e.
func (r *runGraphs) setNode(b *Backend, g *runGraph, i int, e *queuedLaunch) bool {
	set := b.drv.cuGraphExecKernelNodeSetParams
	if set == 0 {
		set = b.drv.cuGraphExecKernelNodeSetParamsV1
	}
	if cuResult(set.call(g.exec, g.nodes[i], r.nodeParams(e))) != cudaSuccess {
		return false
	}
	g.held[i] = *e
	return true
}

// build makes and instantiates a chain of es's launches, or returns nil.
func (r *runGraphs) build(b *Backend, es []*queuedLaunch) *runGraph {
	d := &b.drv
	add := d.cuGraphAddKernelNode
	if add == 0 {
		add = d.cuGraphAddKernelNodeV1
	}
	g := &runGraph{nodes: make([]uintptr, len(es)), held: make([]queuedLaunch, len(es))}
	if cuResult(d.cuGraphCreate.call(uintptr(unsafe.Pointer(&g.graph)), 0)) != cudaSuccess {
		return nil
	}
	for i, e := range es {
		var deps, ndeps uintptr
		if i > 0 {
			deps, ndeps = uintptr(unsafe.Pointer(&g.nodes[i-1])), 1
		}
		if cuResult(add.call(uintptr(unsafe.Pointer(&g.nodes[i])), g.graph, deps, ndeps, r.nodeParams(e))) != cudaSuccess {
			d.cuGraphDestroy.call(g.graph)
			return nil
		}
		g.held[i] = *e
	}
	if cuResult(d.cuGraphInstantiate.call(uintptr(unsafe.Pointer(&g.exec)), g.graph, 0)) != cudaSuccess {
		d.cuGraphDestroy.call(g.graph)
		return nil
	}
	return g
}

// maxRunStreams bounds the streams that keep graphs: past it, every
// stream's are dropped, and those in use are built again.
const maxRunStreams = 16

// sized is stream s's graphs, by run length.
func (r *runGraphs) sized(b *Backend, s device.Stream) *[maxRun + 1]*runGraph {
	if sized := r.byStream[s]; sized != nil {
		return sized
	}
	if r.byStream == nil {
		r.byStream = map[device.Stream]*[maxRun + 1]*runGraph{}
	}
	if len(r.byStream) >= maxRunStreams {
		r.dropAll(b)
	}
	sized := new([maxRun + 1]*runGraph)
	r.byStream[s] = sized
	return sized
}

// dropOne destroys the graph for runs of n in sized. The driver finishes a
// launch of it in flight first.
func (r *runGraphs) dropOne(b *Backend, sized *[maxRun + 1]*runGraph, n int) {
	if g := sized[n]; g != nil {
		b.drv.cuGraphExecDestroy.call(g.exec)
		b.drv.cuGraphDestroy.call(g.graph)
		sized[n] = nil
	}
}

// drop destroys every run's graph, or with a stream only that stream's;
// the context must be current.
func (r *runGraphs) drop(b *Backend, streams ...device.Stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(streams) == 0 {
		r.dropAll(b)
		return
	}
	for _, s := range streams {
		r.dropStream(b, s)
	}
}

func (r *runGraphs) dropAll(b *Backend) {
	for s := range r.byStream {
		r.dropStream(b, s)
	}
}

func (r *runGraphs) dropStream(b *Backend, s device.Stream) {
	if sized := r.byStream[s]; sized != nil {
		for n := range sized {
			r.dropOne(b, sized, n)
		}
		delete(r.byStream, s)
	}
}
