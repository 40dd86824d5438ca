package cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gluaproject/glua/device"
)

// ErrContextLost is wrapped by every error caused by a sticky CUDA fault
// (an illegal address, a failed launch, a trap): the driver keeps returning
// it for the rest of the process, so the backend refuses further work with
// the first such error instead of queueing more onto a dead context.
var ErrContextLost = errors.New("the CUDA context is unusable after this error; restart the process to use the GPU again")

// Error is a status returned by the CUDA driver, NVRTC or cuBLAS, carrying
// the library's own name for it.
type Error struct {
	// Call is the C function that failed, without its _v2 suffix.
	Call string
	// Detail says what the call was for, e.g. the size of a failed
	// allocation; may be empty.
	Detail string
	// Code is the CUresult, nvrtcResult or cublasStatus_t.
	Code int
	// Name is the library's name for Code, e.g. CUDA_ERROR_OUT_OF_MEMORY.
	Name string
	// Description is the library's sentence for Code, when it has one.
	Description string
	// Log is NVRTC's compile log.
	Log string
	// Sticky means the CUDA context is now unusable.
	Sticky bool
	// OutOfMemory means the device had no room; the error then wraps
	// device.ErrOutOfMemory.
	OutOfMemory bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Call)
	if e.Detail != "" {
		b.WriteString("(" + e.Detail + ")")
	}
	b.WriteString(": ")
	b.WriteString(e.Name)
	if e.Description != "" && e.Description != e.Name {
		b.WriteString(" (" + e.Description + ")")
	}
	if e.Sticky {
		b.WriteString("; " + ErrContextLost.Error())
	}
	if e.Log != "" {
		b.WriteString("\n" + strings.TrimRight(e.Log, "\n\x00"))
	}
	return b.String()
}

// Unwrap lets errors.Is find device.ErrOutOfMemory and ErrContextLost.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.OutOfMemory {
		errs = append(errs, device.ErrOutOfMemory)
	}
	if e.Sticky {
		errs = append(errs, ErrContextLost)
	}
	return errs
}

// cuResult is a CUresult.
type cuResult uint32

const (
	cudaSuccess          cuResult = 0
	cudaErrorOutOfMemory cuResult = 2
	cudaErrorNotReady    cuResult = 600
)

// cuResultNames are the CUresult names of cuda.h (CUDA 12.8). They are used
// when cuGetErrorName itself fails, and by tests that run without a driver.
var cuResultNames = map[cuResult]string{
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED",
	5: "CUDA_ERROR_PROFILER_DISABLED", 6: "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
	7: "CUDA_ERROR_PROFILER_ALREADY_STARTED", 8: "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
	34: "CUDA_ERROR_STUB_LIBRARY", 46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
	202: "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 205: "CUDA_ERROR_MAP_FAILED",
	206: "CUDA_ERROR_UNMAP_FAILED", 207: "CUDA_ERROR_ARRAY_IS_MAPPED",
	208: "CUDA_ERROR_ALREADY_MAPPED", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	210: "CUDA_ERROR_ALREADY_ACQUIRED", 211: "CUDA_ERROR_NOT_MAPPED",
	212: "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", 213: "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE", 215: "CUDA_ERROR_UNSUPPORTED_LIMIT",
	216: "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
	218: "CUDA_ERROR_INVALID_PTX", 219: "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
	220: "CUDA_ERROR_NVLINK_UNCORRECTABLE", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	224: "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", 225: "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
	226: "CUDA_ERROR_CONTAINED",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND",
	302: "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 303: "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE", 401: "CUDA_ERROR_ILLEGAL_STATE", 402: "CUDA_ERROR_LOSSY_QUERY",
	500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT", 703: "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
	704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
	708: "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", 709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	710: "CUDA_ERROR_ASSERT", 711: "CUDA_ERROR_TOO_MANY_PEERS",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 713: "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS", 717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718: "CUDA_ERROR_INVALID_PC", 719: "CUDA_ERROR_LAUNCH_FAILED",
	720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 721: "CUDA_ERROR_TENSOR_MEMORY_LEAK",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
	806: "CUDA_ERROR_MPS_RPC_FAILURE", 807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
	808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
	810: "CUDA_ERROR_MPS_CLIENT_TERMINATED", 811: "CUDA_ERROR_CDP_NOT_SUPPORTED",
	812: "CUDA_ERROR_CDP_VERSION_MISMATCH",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 909: "CUDA_ERROR_TIMEOUT",
	910: "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 911: "CUDA_ERROR_EXTERNAL_DEVICE",
	912: "CUDA_ERROR_INVALID_CLUSTER_SIZE", 913: "CUDA_ERROR_FUNCTION_NOT_LOADED",
	914: "CUDA_ERROR_INVALID_RESOURCE_TYPE", 915: "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
	916: "CUDA_ERROR_KEY_ROTATION",
	999: "CUDA_ERROR_UNKNOWN",
}

// stickyResults are the codes cuda.h documents as leaving the process in
// an inconsistent state ("any further CUDA work will return the same
// error... the process must be terminated and relaunched") or the context
// unusable.
var stickyResults = map[cuResult]bool{
	214: true, // ECC_UNCORRECTABLE
	226: true, // CONTAINED
	700: true, // ILLEGAL_ADDRESS
	702: true, // LAUNCH_TIMEOUT
	709: true, // CONTEXT_IS_DESTROYED
	710: true, // ASSERT (device-side assert)
	714: true, // HARDWARE_STACK_ERROR
	715: true, // ILLEGAL_INSTRUCTION
	716: true, // MISALIGNED_ADDRESS
	717: true, // INVALID_ADDRESS_SPACE
	718: true, // INVALID_PC
	719: true, // LAUNCH_FAILED
	721: true, // TENSOR_MEMORY_LEAK
	810: true, // MPS_CLIENT_TERMINATED
	911: true, // EXTERNAL_DEVICE
}

func cuResultName(r cuResult) string {
	if n, ok := cuResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult(%d)", uint32(r))
}

// newDriverError builds the error for a failed driver call; name and desc
// come from cuGetErrorName/cuGetErrorString when the driver answers.
func newDriverError(call, detail string, r cuResult, name, desc string) *Error {
	if name == "" {
		name = cuResultName(r)
	}
	return &Error{
		Call:        strings.TrimSuffix(call, "_v2"),
		Detail:      detail,
		Code:        int(r),
		Name:        name,
		Description: desc,
		Sticky:      stickyResults[r],
		OutOfMemory: r == cudaErrorOutOfMemory,
	}
}

// nvrtcResultNames are nvrtc.h's names, for when nvrtcGetErrorString is
// unavailable and for tests without a GPU.
var nvrtcResultNames = map[int]string{
	0: "NVRTC_SUCCESS", 1: "NVRTC_ERROR_OUT_OF_MEMORY", 2: "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
	3: "NVRTC_ERROR_INVALID_INPUT", 4: "NVRTC_ERROR_INVALID_PROGRAM", 5: "NVRTC_ERROR_INVALID_OPTION",
	6: "NVRTC_ERROR_COMPILATION", 7: "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
	8: "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 9: "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
	10: "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 11: "NVRTC_ERROR_INTERNAL_ERROR",
	12: "NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 13: "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
	14: "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 15: "NVRTC_ERROR_PCH_CREATE",
	16: "NVRTC_ERROR_CANCELLED", 17: "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
}

func nvrtcResultName(r int) string {
	if n, ok := nvrtcResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("nvrtcResult(%d)", r)
}

// cublasStatusNames are cublas_api.h's names (the enum has gaps).
var cublasStatusNames = map[int]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
}

const cublasStatusAllocFailed = 3

func cublasStatusName(s int) string {
	if n, ok := cublasStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("cublasStatus_t(%d)", s)
}

// newCublasError builds the error for a failed cuBLAS call. ALLOC_FAILED is
// cuBLAS failing to get device memory, so it counts as out of memory: freeing
// cached blocks can make the retry succeed.
func newCublasError(call, detail string, status int, name, desc string) *Error {
	if name == "" {
		name = cublasStatusName(status)
	}
	return &Error{
		Call:        strings.TrimSuffix(call, "_v2"),
		Detail:      detail,
		Code:        status,
		Name:        name,
		Description: desc,
		OutOfMemory: status == cublasStatusAllocFailed,
	}
}

func newNVRTCError(call, detail string, r int, name, log string) *Error {
	if name == "" {
		name = nvrtcResultName(r)
	}
	return &Error{Call: call, Detail: detail, Code: r, Name: name, Log: log}
}
