package cpu

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/internal/freeport"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Local()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestAllReduceSumsDeviceMemoryOfTwoBackends(t *testing.T) {
	addr := freeAddr(t)
	const n = 5
	var wg sync.WaitGroup
	got := make([][]float32, 2)
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newTestBackend(t)
			c, err := b.OpenComm(context.Background(), device.CommConfig{Rank: r, Size: 2, Addr: addr, Timeout: 10 * time.Second})
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			p, _ := b.Alloc(n * 4)
			buf := b.Bytes(p, n*4)
			for i := range n {
				device.Set(device.Float32, buf, i, float64(10*r+i))
			}
			errs[r] = c.AllReduce(p, n, device.Float32, device.ReduceSum, 0)
			for i := range n {
				got[r] = append(got[r], float32(device.Get(device.Float32, buf, i)))
			}
		}()
	}
	wg.Wait()
	for r := range 2 {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for i, v := range got[r] {
			if want := float32(10 + 2*i); v != want {
				t.Errorf("rank %d element %d = %v, want %v", r, i, v, want)
			}
		}
	}
}

func TestCollectiveOnMemoryNotAllocatedIsAnError(t *testing.T) {
	b := newTestBackend(t)
	c, err := b.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AllReduce(device.Ptr(12345), 4, device.Float32, device.ReduceSum, 0); err == nil {
		t.Error("AllReduce of memory that is no allocation succeeded")
	}
}

func TestRingFailureBecomesACommErrorNamingTheRank(t *testing.T) {
	addr := freeAddr(t)
	b := newTestBackend(t)
	_, err := b.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 2, Addr: addr, Timeout: 300 * time.Millisecond})
	var ce *device.CommError
	if !errors.As(err, &ce) || ce.Rank != 1 {
		t.Fatalf("OpenComm without rank 1: %v, want a CommError naming rank 1", err)
	}
}

// A collective is followed in the streams' order as work on its stream:
// an all-reduce of memory an upload on another stream still writes is
// refused before the ring is called, naming the upload, and runs once
// its stream waits for the upload; the root's broadcast, which only
// reads its buffer, is in no conflict with a download reading it too.
func TestACollectiveThatNothingOrdersIsRefused(t *testing.T) {
	b := newTestBackend(t)
	c, err := b.OpenComm(context.Background(), device.CommConfig{Rank: 0, Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf, err := b.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	host, err := b.AllocHost(64)
	if err != nil {
		t.Fatal(err)
	}
	s, errS := b.NewStream()
	e, errE := b.NewEvent()
	if err := errors.Join(errS, errE); err != nil {
		t.Fatal(err)
	}
	if err := b.UploadAsync(buf, host, s); err != nil {
		t.Fatal(err)
	}
	err = c.AllReduce(buf, 16, device.Float32, device.ReduceSum, 0)
	if err == nil || !strings.Contains(err.Error(), "all_reduce on stream 0 writes device memory (its buf") || !strings.Contains(err.Error(), "that an upload on stream") {
		t.Fatalf("an all-reduce queued before its wait for the upload: %v; want it refused, naming the upload", err)
	}
	if err := errors.Join(b.Record(e, s), b.StreamWaitEvent(0, e)); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(buf, 16, device.Float32, device.ReduceSum, 0); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	if err := errors.Join(b.Record(e, 0), b.StreamWaitEvent(s, e), b.DownloadAsync(host, buf, s)); err != nil {
		t.Fatal(err)
	}
	if err := c.Broadcast(buf, 16, device.Float32, 0, 0); err != nil {
		t.Fatalf("the root's broadcast beside a download of its buffer: %v", err)
	}
}
