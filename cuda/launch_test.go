package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestLaunchConfigurationsBeyondTheLimitsNameTheLimit(t *testing.T) {
	lim := launchLimits{
		kernel: "k", deviceThreads: 1024, functionThread: 768,
		block: [3]int{1024, 1024, 64}, grid: [3]int{math.MaxInt32, 65535, 65535},
		sharedOptin: 227 << 10, staticShared: 1024,
	}
	one := [3]uint32{1, 1, 1}
	for _, tc := range []struct {
		grid, block [3]uint32
		shared      uint32
		want        string
	}{
		{one, [3]uint32{256, 1, 1}, 0, ""},
		{[3]uint32{1 << 30, 65535, 1}, [3]uint32{768, 1, 1}, 0, ""},
		{one, [3]uint32{2048, 1, 1}, 0, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X"},
		{one, [3]uint32{32, 32, 2}, 0, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"},
		{one, [3]uint32{1, 1, 65}, 0, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z"},
		{one, [3]uint32{1024, 1, 1}, 0, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"},
		{[3]uint32{1, 65536, 1}, one, 0, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y"},
		{[3]uint32{0, 1, 1}, one, 0, "at least 1"},
		{one, [3]uint32{32, 0, 1}, 0, "at least 1"},
		{one, one, 226 << 10, ""},
		{one, one, 227 << 10, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
	} {
		err := checkLaunch(lim, tc.grid, tc.block, tc.shared)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("grid %v block %v shared %d: unexpected error %v", tc.grid, tc.block, tc.shared, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("grid %v block %v shared %d: error %v, want one naming %s", tc.grid, tc.block, tc.shared, err, tc.want)
		}
	}
}

func TestKernelArgumentsAreMarshalledByType(t *testing.T) {
	slots, err := marshalArgs([]any{device.Ptr(0xdead00), int32(-2), uint32(7), int64(-3), uint64(1 << 40), float32(1.5), float64(-2.25)})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0xdead00, 0xfffffffe, 7, 0xfffffffffffffffd, 1 << 40, uint64(math.Float32bits(1.5)), math.Float64bits(-2.25)}
	if len(slots) != len(want) {
		t.Fatalf("got %d slots, want %d", len(slots), len(want))
	}
	for i := range want {
		if slots[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, slots[i], want[i])
		}
	}
	for _, bad := range []any{1, "x", 1.0 + 2i, []byte{1}} {
		if _, err := marshalArgs([]any{device.Ptr(1), bad}); err == nil || !strings.Contains(err.Error(), "argument 2") {
			t.Errorf("argument %T: error %v, want one naming argument 2 and its type", bad, err)
		}
	}
	if slots, err := marshalArgs(nil); err != nil || len(slots) != 0 {
		t.Errorf("no arguments: %v, %v", slots, err)
	}
}
