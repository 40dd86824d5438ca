package cuda

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// Host words carry a kernel's one-number result back without a copy: the
// kernel writes 8 bytes of page-locked host memory mapped into the
// device's address space, and the host reads them once the stream has
// caught up. A copy of 8 bytes instead queues a DMA after the kernel, and
// from pageable memory the driver also stages it, on every call: up to
// 4% of a 2^28-element float32 sum's 0.26 ms on an H200.
const hostWordCount = 512 // one 4 KiB page

// hostWordPage is the backend's page of host words, made on first use
// and freed by Close.
type hostWordPage struct {
	once sync.Once
	err  error          // why there is no page
	base unsafe.Pointer // outside Go's heap
	dev  device.Ptr     // base in the device's address space

	mu   sync.Mutex
	free []int32 // slots not taken

	// awaited counts the words taken and not yet read or given back: the
	// host is about to wait for the kernels that write them, so their
	// launches go straight to the driver rather than through the launch
	// queue, whose hand-over would only lengthen that wait.
	awaited atomic.Int32
}

// TakeHostWord reserves a word of mapped host memory for a result that a
// kernel queued on s will write at dev. ReadHostWord(slot, s) then waits
// for s and returns the word; ReleaseHostWord gives back a slot whose
// kernel was never queued. It fails while s records a graph (a replay
// would write the word long after the read), where the driver cannot map
// host memory, and when every word is taken.
func (b *Backend) TakeHostWord(s device.Stream) (slot int, dev device.Ptr, err error) {
	if b.closed.Load() {
		return 0, 0, errClosed // its page is freed
	}
	if err := b.refuseInCapture("a result written to host memory", s, false); err != nil {
		return 0, 0, err
	}
	p := &b.words
	p.once.Do(func() { p.err = b.allocHostWords() })
	if p.err != nil {
		return 0, 0, p.err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return 0, 0, fmt.Errorf("cuda: TakeHostWord: all %d host words are taken", hostWordCount)
	}
	slot = int(p.free[len(p.free)-1])
	p.free = p.free[:len(p.free)-1]
	p.awaited.Add(1)
	return slot, p.dev + device.Ptr(8*slot), nil
}

// ReadHostWord waits for the work queued on s and returns the word at
// slot, which it gives back. When the wait fails the slot is kept out of
// use: a kernel still queued may write it later.
func (b *Backend) ReadHostWord(slot int, s device.Stream) (uint64, error) {
	p := &b.words
	defer p.awaited.Add(-1)
	if err := b.StreamSynchronize(s); err != nil {
		return 0, err
	}
	v := atomic.LoadUint64((*uint64)(unsafe.Add(p.base, 8*slot)))
	p.release(slot)
	return v, nil
}

// ReleaseHostWord gives back a slot from TakeHostWord.
func (b *Backend) ReleaseHostWord(slot int) {
	b.words.awaited.Add(-1)
	b.words.release(slot)
}

func (p *hostWordPage) release(slot int) {
	p.mu.Lock()
	p.free = append(p.free, int32(slot))
	p.mu.Unlock()
}

// allocHostWords maps the page of host words into the device's address
// space.
func (b *Backend) allocHostWords() error {
	if b.drv.cuMemHostGetDevicePointer == 0 {
		return fmt.Errorf("cuda: the driver has no cuMemHostGetDevicePointer")
	}
	if err := b.begin(); err != nil {
		return err
	}
	defer b.end()
	var host unsafe.Pointer
	const bytes = 8 * hostWordCount
	r := cuResult(b.drv.cuMemHostAlloc.call(uintptr(unsafe.Pointer(&host)), bytes, cuMemHostAllocPortable|cuMemHostAllocDeviceMap))
	if err := b.check("cuMemHostAlloc", "host words", r); err != nil {
		return err
	}
	var dev uint64
	r = cuResult(b.drv.cuMemHostGetDevicePointer.call(uintptr(unsafe.Pointer(&dev)), uintptr(host), 0))
	if err := b.check("cuMemHostGetDevicePointer", "host words", r); err != nil {
		b.drv.cuMemFreeHost.call(uintptr(host))
		return err
	}
	p := &b.words
	p.base, p.dev = host, device.Ptr(dev)
	p.free = make([]int32, hostWordCount)
	for i := range p.free {
		p.free[i] = int32(hostWordCount - 1 - i)
	}
	return nil
}

// freeHostWords frees the page, if there is one; Close calls it with the
// context current.
func (b *Backend) freeHostWords() error {
	p := &b.words
	if p.base == nil {
		return nil
	}
	base := p.base
	p.base = nil
	return b.check("cuMemFreeHost", "host words", cuResult(b.drv.cuMemFreeHost.call(uintptr(base))))
}
