package cuda

import (
	"context"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gluaproject/glua/config"
	"github.com/gluaproject/glua/device"
)

func TestEveryDTypeMapsToNCCLsOwnTypeValue(t *testing.T) {
	// ncclDataType_t of nccl.h: ncclUint8 = 1, ncclInt32 = 2, ncclInt64 = 4,
	// ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9.
	want := map[device.DType]uintptr{
		device.Uint8: 1, device.Int32: 2, device.Int64: 4, device.Float16: 6,
		device.Float32: 7, device.Float64: 8, device.BFloat16: 9,
	}
	for _, dt := range device.DTypes {
		got, err := ncclDataType(dt)
		if err != nil || got != want[dt] {
			t.Errorf("%s: got %d, %v; want %d", dt, got, err, want[dt])
		}
	}
	if _, err := ncclDataType(device.Invalid); err == nil {
		t.Error("the invalid dtype mapped to an NCCL type")
	}
}

func TestEveryReductionMapsToNCCLsOwnOpValue(t *testing.T) {
	// ncclRedOp_t of nccl.h: ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4.
	want := map[string]uintptr{"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4}
	for name, v := range want {
		op, err := device.ParseReduceOp(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ncclRedOp(op); err != nil || got != v {
			t.Errorf("%s: got %d, %v; want %d", name, got, err, v)
		}
	}
	if _, err := ncclRedOp(0); err == nil {
		t.Error("reduce op 0 mapped to an NCCL op")
	}
}

func TestUniqueIDHasNCCLsSize(t *testing.T) {
	if n := unsafe.Sizeof(ncclUniqueID{}); n != 128 { // NCCL_UNIQUE_ID_BYTES
		t.Fatalf("ncclUniqueID is %d bytes, want 128", n)
	}
}

func TestNCCLResultNamesFollowTheHeader(t *testing.T) {
	for code, name := range map[int]string{0: "ncclSuccess", 2: "ncclSystemError", 6: "ncclRemoteError", 7: "ncclInProgress", 8: "ncclTimeout", 42: "ncclResult_t(42)"} {
		if got := ncclResultName(code); got != name {
			t.Errorf("%d: %q, want %q", code, got, name)
		}
	}
}

func TestNCCLVersionCodesDecode(t *testing.T) {
	for code, want := range map[int]string{22703: "2.27.3", 21805: "2.18.5", 2804: "2.8.4"} {
		if got := ncclVersionString(code); got != want {
			t.Errorf("%d: %q, want %q", code, got, want)
		}
	}
}

func TestMissingNCCLNamesTheLibraryAndEveryNameTried(t *testing.T) {
	names := []string{"/nonexistent/libglua-missing-nccl.so", "libglua-missing-nccl.so.2"}
	_, err := openNCCL(names)
	if err == nil {
		t.Fatal("opening a missing NCCL succeeded")
	}
	for _, want := range append([]string{"NCCL", "tried"}, names...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestGLUALIBNCCLChoosesTheNamesTried(t *testing.T) {
	env := map[string]string{"GLUA_CONFIG": "/dev/null", "GLUA_LIBNCCL": "/nonexistent/libglua-missing-nccl.so"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CUDA.LibNCCL; len(got) != 1 || got[0] != "/nonexistent/libglua-missing-nccl.so" {
		t.Fatalf("cuda.libnccl = %q", got)
	}
	if _, err := openNCCL(cfg.CUDA.LibNCCL); err == nil || !strings.Contains(err.Error(), "libglua-missing-nccl.so") {
		t.Fatalf("got %v, want an error naming the configured library", err)
	}
}

// A group of several processes on a machine without NCCL fails where the
// group is formed, with an error naming the library and each name tried,
// before touching the device or the network; --info reports the absence
// as a line, not a failure. Load never opens NCCL, so one process on one
// GPU does not need it (TestOneGPUWorksWithoutNCCL checks that on a GPU).
func TestAGroupWithoutNCCLFailsNamingTheLibrary(t *testing.T) {
	t.Setenv(envCommID, "") // OpenComm sets it; t restores it after
	missing := []string{"/nonexistent/libglua-missing-nccl.so", "libglua-missing-nccl.so.2"}
	b := &Backend{cfg: Config{LibNCCL: missing}}
	_, err := b.OpenComm(context.Background(), device.CommConfig{Rank: 1, Size: 2, Addr: "127.0.0.1:1", Timeout: time.Second})
	if err == nil {
		t.Fatal("a group formed without NCCL")
	}
	for _, want := range append([]string{"a group of 2 processes on the cuda backend needs NCCL", "tried"}, missing...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got, want := b.describeNCCL(), "NCCL: not found (tried "+strings.Join(missing, ", ")+")"; got != want {
		t.Errorf("--info's line %q, want %q", got, want)
	}
}
