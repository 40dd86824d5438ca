package cuda

import (
	"errors"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// cuStreamCaptureModeRelaxed (CU_STREAM_CAPTURE_MODE_RELAXED) lets the
// pool grow with cuMemAlloc while a graph is recorded; the calls that
// cannot be recorded are refused by the backend itself (refuseInCapture)
// with a message that says why, before the driver would invalidate the
// capture with a bare error code.
const cuStreamCaptureModeRelaxed = 2

func (b *Backend) hasGraphs() error {
	d := &b.drv
	if d.cuStreamBeginCapture == 0 || d.cuStreamEndCapture == 0 || d.cuGraphInstantiate == 0 ||
		d.cuGraphGetNodes == 0 || d.cuGraphLaunch == 0 || d.cuGraphExecDestroy == 0 || d.cuGraphDestroy == 0 {
		return errors.New("cuda: this driver has no CUDA graphs (cuGraphInstantiateWithFlags needs CUDA 11.4 or later)")
	}
	return nil
}

// BeginCapture starts recording the work queued on s. The stream's cuBLAS
// handle and workspace are made first: cublasCreate allocates and
// synchronises, which a capture cannot hold.
func (b *Backend) BeginCapture(s device.Stream) error {
	if err := b.hasGraphs(); err != nil {
		return err
	}
	if s == 0 {
		return errors.New("cuda: the default stream cannot be captured; capture on a stream from NewStream")
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	if _, err := b.handle(s); err != nil {
		return err
	}
	r := cuResult(b.drv.cuStreamBeginCapture.call(uintptr(s), cuStreamCaptureModeRelaxed))
	if err := b.check("cuStreamBeginCapture", "", r); err != nil {
		return err
	}
	b.mu.Lock()
	if b.captures == nil {
		b.captures = map[device.Stream]bool{}
	}
	b.captures[s] = true
	b.mu.Unlock()
	b.capturing.Add(1)
	return nil
}

// EndCapture stops recording on s and instantiates the recording.
func (b *Backend) EndCapture(s device.Stream) (device.Graph, int, error) {
	if err := b.begin(); err != nil {
		return 0, 0, err
	}
	defer b.end()
	var g uintptr
	r := cuResult(b.drv.cuStreamEndCapture.call(uintptr(s), uintptr(unsafe.Pointer(&g))))
	b.mu.Lock()
	delete(b.captures, s)
	b.mu.Unlock()
	b.capturing.Add(-1)
	if err := b.check("cuStreamEndCapture", "", r); err != nil {
		if g != 0 {
			b.drv.cuGraphDestroy.call(g)
		}
		return 0, 0, err
	}
	defer b.drv.cuGraphDestroy.call(g) // the executable graph is independent of it
	var nodes uintptr
	r = cuResult(b.drv.cuGraphGetNodes.call(g, 0, uintptr(unsafe.Pointer(&nodes))))
	if err := b.check("cuGraphGetNodes", "", r); err != nil {
		return 0, 0, err
	}
	var exec uintptr
	r = cuResult(b.drv.cuGraphInstantiate.call(uintptr(unsafe.Pointer(&exec)), g, 0))
	if err := b.check("cuGraphInstantiateWithFlags", "", r); err != nil {
		return 0, 0, err
	}
	return device.Graph(exec), int(nodes), nil
}

// LaunchGraph queues a replay of g on s.
func (b *Backend) LaunchGraph(g device.Graph, s device.Stream) error {
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuGraphLaunch", "", cuResult(b.drv.cuGraphLaunch.call(uintptr(g), uintptr(s))))
}

// DestroyGraph releases g; the driver finishes a replay in flight first.
func (b *Backend) DestroyGraph(g device.Graph) error {
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	return b.check("cuGraphExecDestroy", "", cuResult(b.drv.cuGraphExecDestroy.call(uintptr(g))))
}

// refuseInCapture is the error for call on stream s while s records a
// graph: it would wait for the device, or read host memory at each replay
// that may be gone by then. With wholeDevice the call waits for every
// stream, and is refused while any records.
func (b *Backend) refuseInCapture(call string, s device.Stream, wholeDevice bool) error {
	if b.capturing.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	refused := wholeDevice || b.captures[s]
	b.mu.Unlock()
	if !refused {
		return nil
	}
	return &device.CaptureError{Op: call}
}
