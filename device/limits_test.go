package device

import (
	"math"
	"testing"
)

func TestLaunchesBeyondTheDataCentreGPUsLimitsAreRefusedNamingTheLimit(t *testing.T) {
	l := DataCentreLimits()
	one := [3]uint32{1, 1, 1}
	for _, tc := range []struct {
		grid, block [3]uint32
		dyn         uint32
		static      int
		want        string
	}{
		{one, [3]uint32{1024, 1, 1}, 0, 0, ""},
		{[3]uint32{math.MaxInt32, 65535, 65535}, [3]uint32{16, 8, 8}, 0, 0, ""},
		{one, [3]uint32{2048, 1, 1}, 0, 0, "block.x = 2048 exceeds the device's limit of 1024 (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)"},
		{one, [3]uint32{1, 1, 65}, 0, 0, "block.z = 65 exceeds the device's limit of 64 (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)"},
		{one, [3]uint32{32, 32, 2}, 0, 0, "a block of 32×32×2 = 2048 threads exceeds the device's limit of 1024 threads per block (CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)"},
		{[3]uint32{1, 65536, 1}, one, 0, 0, "grid.y = 65536 exceeds the device's limit of 65535 (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)"},
		{[3]uint32{1 << 31, 1, 1}, one, 0, 0, "grid.x = 2147483648 exceeds the device's limit of 2147483647 (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)"},
		{[3]uint32{0, 1, 1}, one, 0, 0, "grid [0 1 1] and block [1 1 1] must be at least 1 in every dimension"},
		{one, one, 227 << 10, 0, ""},
		{one, one, 226 << 10, 2 << 10, "231424 bytes of dynamic shared memory plus 2048 static exceed the device's limit of 232448 bytes per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"},
	} {
		err := l.CheckLaunch(tc.grid, tc.block, tc.dyn, tc.static)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("grid %v block %v shared %d+%d: unexpected error %v", tc.grid, tc.block, tc.dyn, tc.static, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("grid %v block %v shared %d+%d: error %v, want %q", tc.grid, tc.block, tc.dyn, tc.static, err, tc.want)
		}
	}
}

func TestStaticSharedMemoryPast48KiBIsRefused(t *testing.T) {
	l := DataCentreLimits()
	if err := l.CheckStaticShared(48 << 10); err != nil {
		t.Errorf("48 KiB: %v", err)
	}
	err := l.CheckStaticShared(800000)
	want := "800000 bytes of shared arrays exceed the device's limit of 49152 bytes of static shared memory per block (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)"
	if err == nil || err.Error() != want {
		t.Errorf("800000 bytes: %v, want %q", err, want)
	}
}
