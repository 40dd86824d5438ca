package cpu

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/gluaproject/glua/device"
)

// A capture runs nothing: the copies, memsets, products and host work
// queued on the stream run, on the same memory, at each launch.
func TestAGraphRunsWhatItsStreamQueuedAtEachLaunchAndNothingAtTheCapture(t *testing.T) {
	b := newTestBackend(t)
	s, _ := b.NewStream()
	src, _ := b.Alloc(256)
	dst, _ := b.Alloc(256)
	c, _ := b.Alloc(256)
	copy(b.Bytes(src, 4), []byte{1, 2, 3, 4})
	f32 := func(p device.Ptr) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b.Bytes(p, 4)[0])), 1) }
	f32(c)[0] = 0
	runs := 0
	if err := b.BeginCapture(s); err != nil {
		t.Fatal(err)
	}
	steps := []error{
		b.Memset(dst, 9, 8, s),
		b.Copy(dst, src, 4, s),
		b.Gemm(device.Gemm{DType: device.Float32, M: 1, N: 1, K: 1, A: c, B: c, C: c, LDA: 1, LDB: 1, LDC: 1, Alpha: 1, Beta: 1, Stream: s}),
		b.Run(s, func() error { runs++; f32(c)[0] += 1; return nil }),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	if err := b.Upload(src, []byte{7}, s); !errors.As(err, new(*device.CaptureError)) {
		t.Errorf("an upload during the capture: %v, want a capture error", err)
	}
	g, nodes, err := b.EndCapture(s)
	if err != nil || nodes != 4 {
		t.Fatalf("EndCapture: %d nodes, %v; want 4", nodes, err)
	}
	if runs != 0 || b.Bytes(dst, 1)[0] != 0 || f32(c)[0] != 0 {
		t.Fatalf("the capture ran work: %d runs, dst[0] = %d, c = %v", runs, b.Bytes(dst, 1)[0], f32(c)[0])
	}
	for launch := 1; launch <= 3; launch++ {
		if err := b.LaunchGraph(g, 0); err != nil {
			t.Fatal(err)
		}
	}
	// c = c + c·c, then c += 1, three times over: 0 → 1 → 3 → 13
	if got := b.Bytes(dst, 8); runs != 3 || string(got) != "\x01\x02\x03\x04\x09\x09\x09\x09" || math.Abs(float64(f32(c)[0])-13) > 0 {
		t.Fatalf("after 3 launches: %d runs, dst %v, c %v", runs, got, f32(c)[0])
	}
	// work on the stream after the capture runs at once, once it is
	// ordered after the launches (on stream 0), which write dst too
	if err := b.StreamSynchronize(0); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset(dst, 0, 8, s); err != nil || b.Bytes(dst, 1)[0] != 0 {
		t.Fatalf("a memset after the capture: %v", err)
	}
	if err := b.DestroyGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := b.LaunchGraph(g, 0); err == nil {
		t.Error("a destroyed graph launched")
	}
}

func TestCaptureRefusesTheDefaultStreamAndNesting(t *testing.T) {
	b := newTestBackend(t)
	if err := b.BeginCapture(0); err == nil {
		t.Error("the default stream was captured")
	}
	s, _ := b.NewStream()
	if err := b.BeginCapture(s); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginCapture(s); err == nil {
		t.Error("a second capture on a recording stream")
	}
	p, _ := b.Alloc(256)
	if err := b.Copy(p+1024, p, 8, s); err == nil {
		t.Error("a copy out of its allocation was recorded rather than refused at the capture")
	}
	if _, _, err := b.EndCapture(s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.EndCapture(s); err == nil {
		t.Error("EndCapture on a stream that does not record")
	}
}
