package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/gluaproject/glua/device"
)

func TestDriverErrorsCarryTheDriversNames(t *testing.T) {
	for _, tc := range []struct {
		code   cuResult
		name   string
		oom    bool
		sticky bool
	}{
		{1, "CUDA_ERROR_INVALID_VALUE", false, false},
		{2, "CUDA_ERROR_OUT_OF_MEMORY", true, false},
		{100, "CUDA_ERROR_NO_DEVICE", false, false},
		{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", false, false},
		{600, "CUDA_ERROR_NOT_READY", false, false},
		{700, "CUDA_ERROR_ILLEGAL_ADDRESS", false, true},
		{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", false, false},
		{714, "CUDA_ERROR_HARDWARE_STACK_ERROR", false, true},
		{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", false, true},
		{716, "CUDA_ERROR_MISALIGNED_ADDRESS", false, true},
		{719, "CUDA_ERROR_LAUNCH_FAILED", false, true},
		{999, "CUDA_ERROR_UNKNOWN", false, false},
		{4242, "CUresult(4242)", false, false},
	} {
		e := newDriverError("cuSomething_v2", "", tc.code, "", "")
		if e.Name != tc.name {
			t.Errorf("code %d: name %q, want %q", tc.code, e.Name, tc.name)
		}
		if got := errors.Is(e, device.ErrOutOfMemory); got != tc.oom {
			t.Errorf("%s: errors.Is(ErrOutOfMemory) = %v", tc.name, got)
		}
		if got := errors.Is(e, ErrContextLost); got != tc.sticky {
			t.Errorf("%s: errors.Is(ErrContextLost) = %v", tc.name, got)
		}
		if tc.sticky && !strings.Contains(e.Error(), "restart the process") {
			t.Errorf("sticky error %q does not tell the user to restart", e)
		}
		if strings.Contains(e.Error(), "_v2") {
			t.Errorf("error %q shows the symbol's version suffix", e)
		}
	}
}

func TestDriverErrorMessageFormat(t *testing.T) {
	e := newDriverError("cuMemAlloc_v2", "", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
	if got, want := e.Error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = newDriverError("cuMemAlloc_v2", "80.0 GiB", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")
	if got, want := e.Error(), "cuMemAlloc(80.0 GiB): CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCublasStatusNames(t *testing.T) {
	for code, want := range map[int]string{
		7: "CUBLAS_STATUS_INVALID_VALUE", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
		15: "CUBLAS_STATUS_NOT_SUPPORTED", 99: "cublasStatus_t(99)",
	} {
		e := newCublasError("cublasGemmEx", "", code, "", "")
		if !strings.HasPrefix(e.Error(), "cublasGemmEx: "+want) {
			t.Errorf("status %d: %q, want the name %s", code, e, want)
		}
		if errors.Is(e, device.ErrOutOfMemory) {
			t.Errorf("status %d counted as out of memory", code)
		}
	}
	if e := newCublasError("cublasCreate_v2", "", 3, "", ""); !errors.Is(e, device.ErrOutOfMemory) || e.Name != "CUBLAS_STATUS_ALLOC_FAILED" {
		t.Errorf("ALLOC_FAILED: %v does not wrap ErrOutOfMemory", e)
	}
}

func TestNVRTCErrorCarriesTheLog(t *testing.T) {
	e := newNVRTCError("nvrtcCompileProgram", "k.cu", 6, "", "k.cu(3): error: identifier \"x\" is undefined\n\x00")
	msg := e.Error()
	if !strings.HasPrefix(msg, "nvrtcCompileProgram(k.cu): NVRTC_ERROR_COMPILATION\n") {
		t.Errorf("message %q lacks the call and NVRTC's name", msg)
	}
	if !strings.HasSuffix(msg, `identifier "x" is undefined`) {
		t.Errorf("message %q does not end with the log", msg)
	}
	if nvrtcResultName(17) != "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED" || nvrtcResultName(40) != "nvrtcResult(40)" {
		t.Error("NVRTC names wrong")
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 80 << 30: "80.0 GiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
