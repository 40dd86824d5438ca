package cuda

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gluaproject/glua/device"
)

// ncclUniqueID is nccl.h's ncclUniqueId, `struct { char internal[128]; }`,
// which ncclCommInitRank takes by value. In the System V amd64 ABI a
// 128-byte aggregate is of class MEMORY: the caller copies it into the
// stack argument area while the int arguments after it still go in
// registers (rank in rdx), so neither SyscallN's word list nor a pointer
// would be right. purego.RegisterFunc lays a struct argument out per ABI
// (amd64: copied to the stack in eightbytes, struct_amd64.go placeStack;
// arm64: a pointer to a caller-owned copy, as AAPCS64 wants for composites
// over 16 bytes), so ncclCommInitRank goes through it.
type ncclUniqueID struct {
	internal [128]byte
}

// ncclAPI holds the NCCL functions glua calls.
type ncclAPI struct {
	ncclGetVersion        fn
	ncclGetUniqueId       fn
	ncclCommInitRank      fn
	ncclCommDestroy       fn
	ncclCommAbort         fn
	ncclCommGetAsyncError fn
	ncclGetErrorString    fn
	ncclGetLastError      fn // optional: NCCL 2.13+
	ncclAllReduce         fn
	ncclBroadcast         fn
	ncclReduce            fn
	ncclAllGather         fn
	ncclReduceScatter     fn
	ncclSend              fn
	ncclRecv              fn
	ncclGroupStart        fn
	ncclGroupEnd          fn

	// commInitRank is ncclCommInitRank bound by purego.RegisterFunc for
	// its by-value ncclUniqueID.
	commInitRank func(comm *uintptr, nranks int32, id ncclUniqueID, rank int32) int32
}

func (n *ncclAPI) symbols() []symbol {
	return []symbol{
		{"ncclGetVersion", &n.ncclGetVersion, false},
		{"ncclGetUniqueId", &n.ncclGetUniqueId, false},
		{"ncclCommInitRank", &n.ncclCommInitRank, false},
		{"ncclCommDestroy", &n.ncclCommDestroy, false},
		{"ncclCommAbort", &n.ncclCommAbort, false},
		{"ncclCommGetAsyncError", &n.ncclCommGetAsyncError, false},
		{"ncclGetErrorString", &n.ncclGetErrorString, false},
		{"ncclGetLastError", &n.ncclGetLastError, true},
		{"ncclAllReduce", &n.ncclAllReduce, false},
		{"ncclBroadcast", &n.ncclBroadcast, false},
		{"ncclReduce", &n.ncclReduce, false},
		{"ncclAllGather", &n.ncclAllGather, false},
		{"ncclReduceScatter", &n.ncclReduceScatter, false},
		{"ncclSend", &n.ncclSend, false},
		{"ncclRecv", &n.ncclRecv, false},
		{"ncclGroupStart", &n.ncclGroupStart, false},
		{"ncclGroupEnd", &n.ncclGroupEnd, false},
	}
}

// ncclResult_t values of nccl.h.
const (
	ncclSuccess    = 0
	ncclInProgress = 7
)

var ncclResultNames = map[int]string{
	0: "ncclSuccess", 1: "ncclUnhandledCudaError", 2: "ncclSystemError",
	3: "ncclInternalError", 4: "ncclInvalidArgument", 5: "ncclInvalidUsage",
	6: "ncclRemoteError", 7: "ncclInProgress", 8: "ncclTimeout",
}

func ncclResultName(r int) string {
	if n, ok := ncclResultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("ncclResult_t(%d)", r)
}

// ncclDataTypes maps glua's dtypes to nccl.h's ncclDataType_t. Every
// dtype glua has is one NCCL has.
var ncclDataTypes = map[device.DType]int{
	device.Uint8:    1, // ncclUint8
	device.Int32:    2, // ncclInt32
	device.Int64:    4, // ncclInt64
	device.Float16:  6, // ncclFloat16
	device.Float32:  7, // ncclFloat32
	device.Float64:  8, // ncclFloat64
	device.BFloat16: 9, // ncclBfloat16
}

// ncclRedOps maps glua's reductions to nccl.h's ncclRedOp_t.
var ncclRedOps = map[device.ReduceOp]int{
	device.ReduceSum:  0, // ncclSum
	device.ReduceProd: 1, // ncclProd
	device.ReduceMax:  2, // ncclMax
	device.ReduceMin:  3, // ncclMin
	device.ReduceAvg:  4, // ncclAvg, NCCL 2.10+
}

func ncclDataType(dt device.DType) (uintptr, error) {
	v, ok := ncclDataTypes[dt]
	if !ok {
		return 0, fmt.Errorf("NCCL has no type for %s", dt)
	}
	return uintptr(v), nil
}

func ncclRedOp(op device.ReduceOp) (uintptr, error) {
	v, ok := ncclRedOps[op]
	if !ok {
		return 0, fmt.Errorf("NCCL has no reduction %s", op)
	}
	return uintptr(v), nil
}

// ncclLibrary is NCCL once opened: the library and its functions.
type ncclLibrary struct {
	lib     *library
	api     ncclAPI
	version int // NCCL_VERSION_CODE: 22703 is 2.27.3
}

// openNCCL opens the first of names that dlopen accepts and binds NCCL's
// functions. It runs at most once per Backend (Backend.nccl), on the
// first group of several processes or the first --info.
func openNCCL(names []string) (*ncclLibrary, error) {
	lib, err := openLibrary("NCCL", names)
	if err != nil {
		return nil, err
	}
	n := &ncclLibrary{lib: lib}
	if err := lib.resolve(n.api.symbols()); err != nil {
		lib.close()
		return nil, err
	}
	purego.RegisterFunc(&n.api.commInitRank, uintptr(n.api.ncclCommInitRank))
	var v int32
	if r := int(int32(n.api.ncclGetVersion.call(uintptr(unsafe.Pointer(&v))))); r != ncclSuccess {
		lib.close()
		return nil, n.error("ncclGetVersion", "", r, 0)
	}
	n.version = int(v)
	return n, nil
}

// ncclVersionString decodes NCCL_VERSION_CODE: major*10000+minor*100+patch
// since 2.9, major*1000+minor*100+patch before.
func ncclVersionString(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}

// error builds the error for a failed NCCL call, with NCCL's sentence for
// r and its last error message, which names the peer or the system call
// that failed where NCCL knows it.
func (n *ncclLibrary) error(call, detail string, r int, comm uintptr) *Error {
	desc := resultString(n.api.ncclGetErrorString.call(uintptr(r)))
	if n.api.ncclGetLastError != 0 {
		if last := strings.TrimSpace(resultString(n.api.ncclGetLastError.call(comm))); last != "" && last != desc {
			desc += ": " + last
		}
	}
	return &Error{Call: call, Detail: detail, Code: r, Name: ncclResultName(r), Description: desc}
}

// check turns an ncclResult_t returned in a register into an error.
func (n *ncclLibrary) check(call, detail string, r uintptr, comm uintptr) error {
	if code := int(int32(uint32(r))); code != ncclSuccess {
		return n.error(call, detail, code, comm)
	}
	return nil
}

// ncclLib opens NCCL the first time it is needed and remembers the outcome.
func (b *Backend) ncclLib() (*ncclLibrary, error) {
	b.ncclOnce.Do(func() {
		b.ncclOpened, b.ncclErr = openNCCL(b.cfg.LibNCCL)
	})
	return b.ncclOpened, b.ncclErr
}
