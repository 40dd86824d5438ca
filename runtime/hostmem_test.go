package runtime_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
	"github.com/gluaproject/glua/runtime"
)

// A host array larger than the machine can give was Go's fatal "out of
// memory", which no recover catches; it is an error before Go is asked.
func TestHostArrayLargerThanTheMachineIsACatchableError(t *testing.T) {
	rt := newCPU(t, runtime.Options{})
	_, err := rt.NewHostArray([]int{1 << 20, 1 << 20}, device.Float32, false)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "out of host memory: tried to allocate 4.0 TiB") {
		t.Fatalf("a 4 TiB host array: %v", err)
	}
	var hostErr *runtime.HostOOMError
	if !errors.As(err, &hostErr) || hostErr.Requested != 4<<40 {
		t.Fatalf("error %#v, want a *runtime.HostOOMError of 4 TiB", err)
	}
	err = rt.DoString(`
		local cuda = require("cuda")
		local ok, err = pcall(cuda.host_array, {1e12})
		assert(not ok and err:find("cuda.host_array: out of host memory", 1, true), tostring(err))
		assert(#cuda.host_array({16}) == 16, "the runtime carries on")`)
	if err != nil {
		t.Fatal(err)
	}
}

// The host limit counts what live host arrays hold, and dropped ones come
// back through the collector before a request is refused.
func TestHostMemoryLimitCountsLiveArraysAndCollectsDroppedOnes(t *testing.T) {
	rt := newCPU(t, runtime.Options{HostMemoryLimit: "64MiB"})
	err := rt.DoString(`
		local cuda = require("cuda")
		local keep = cuda.host_array({1024, 1024, 8}) -- 32 MiB
		local ok, err = pcall(cuda.host_array, {1024, 1024, 10}) -- 40 MiB more
		assert(not ok and err:find("host limit 64 MiB, 32 MiB held by host arrays", 1, true), tostring(err))
		for i = 1, 20 do local dropped = cuda.host_array({1024, 1024, 4}) end -- 16 MiB each
		local d = cuda.zeros({1024, 1024, 12}) -- 48 MiB
		local ok2, err2 = pcall(d.copy_to_host, d)
		assert(not ok2 and err2:find("out of host memory", 1, true), tostring(err2))
		keep = nil
		collectgarbage()
		assert(d:copy_to_host().size == 1024 * 1024 * 12, "fits once keep is gone")`)
	if err != nil {
		t.Fatal(err)
	}
}
