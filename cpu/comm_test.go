package cpu

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gluaproject/glua/device"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
