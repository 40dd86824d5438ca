package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestALaunchBeyondTheKernelsOwnLimitNamesTheKernel(t *testing.T) {
	f := &Function{name: "k", maxThreads: 768, staticShared: 1024}
	one := [3]uint32{1, 1, 1}
	if err := checkLaunch(device.DataCentreLimits(), f, one, [3]uint32{768, 1, 1}, 0); err != nil {
		t.Errorf("768 threads: %v", err)
	}
	err := checkLaunch(device.DataCentreLimits(), f, one, [3]uint32{1024, 1, 1}, 0)
	if want := "cuda: launch k: a block of 1024 threads exceeds this kernel's limit of 768 threads per block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, set by its register use)"; err == nil || err.Error() != want {
		t.Errorf("1024 threads: %v, want %q", err, want)
	}
	// the device's limits come first, with the kernel's static shared
	// memory counted against the opt-in maximum
	err = checkLaunch(device.DataCentreLimits(), f, one, one, 227<<10-1023)
	if want := "cuda: launch k: 231425 bytes of dynamic shared memory plus 1024 static exceed the device's limit of 232448 bytes per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"; err == nil || err.Error() != want {
		t.Errorf("shared: %v, want %q", err, want)
	}
}

func TestKernelArgumentsAreMarshalledByType(t *testing.T) {
	args := []any{device.Ptr(0xdead00), int32(-2), uint32(7), int64(-3), uint64(1 << 40), float32(1.5), float64(-2.25)}
	slots := make([]uint64, len(args))
	if err := marshalArgs(slots, args); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0xdead00, 0xfffffffe, 7, 0xfffffffffffffffd, 1 << 40, uint64(math.Float32bits(1.5)), math.Float64bits(-2.25)}
	for i := range want {
		if slots[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, slots[i], want[i])
		}
	}
	for _, bad := range []any{1, "x", 1.0 + 2i, []byte{1}} {
		if err := marshalArgs(make([]uint64, 2), []any{device.Ptr(1), bad}); err == nil || !strings.Contains(err.Error(), "argument 2") {
			t.Errorf("argument %T: error %v, want one naming argument 2 and its type", bad, err)
		}
	}
	if err := marshalArgs(nil, nil); err != nil {
		t.Errorf("no arguments: %v", err)
	}
}
