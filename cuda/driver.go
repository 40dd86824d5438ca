package cuda

// driverAPI holds the CUDA driver functions glua calls. Where cuda.h maps a
// name to a versioned symbol (cuMemAlloc → cuMemAlloc_v2), the versioned
// symbol is bound: dlsym sees the exported names, not the header's macros.
type driverAPI struct {
	cuInit                    fn
	cuDriverGetVersion        fn
	cuGetErrorName            fn
	cuGetErrorString          fn
	cuDeviceGetCount          fn
	cuDeviceGet               fn
	cuDeviceGetName           fn
	cuDeviceGetAttribute      fn
	cuDeviceTotalMem          fn
	cuDevicePrimaryCtxRetain  fn
	cuDevicePrimaryCtxRelease fn
	cuCtxSetCurrent           fn
	cuCtxSynchronize          fn
	cuMemAlloc                fn
	cuMemFree                 fn
	cuMemGetInfo              fn
	cuMemcpyHtoD              fn
	cuMemcpyDtoH              fn
	cuMemcpyHtoDAsync         fn
	cuMemcpy2DAsync           fn // optional: UploadBlockAsync says the driver has none
	cuMemcpyDtoHAsync         fn
	cuMemcpyDtoDAsync         fn
	cuMemsetD8Async           fn
	cuMemHostAlloc            fn
	cuMemFreeHost             fn
	cuMemHostRegister         fn // optional: AllocHost falls back to cuMemHostAlloc
	cuMemHostUnregister       fn // optional
	cuMemHostGetDevicePointer fn // optional: reductions copy their result back instead
	cuStreamCreate            fn
	// optional: NewPriorityStream falls back to cuStreamCreate
	cuStreamCreateWithPriority  fn
	cuCtxGetStreamPriorityRange fn
	cuStreamGetPriority         fn
	cuStreamDestroy             fn
	cuStreamSynchronize         fn
	cuEventCreate               fn
	cuEventDestroy              fn
	cuEventRecord               fn
	cuStreamWaitEvent           fn
	cuEventSynchronize          fn
	cuEventQuery                fn
	cuEventElapsedTime          fn
	cuEventElapsedTimeV1        fn
	cuModuleLoadData            fn
	cuModuleUnload              fn
	cuModuleGetFunction         fn
	cuFuncGetAttribute          fn
	cuFuncSetAttribute          fn
	cuLaunchKernel              fn
	cuDeviceGetDefaultMemPool   fn // optional: stream-ordered allocation, CUDA 11.2+
	cuMemAllocFromPoolAsync     fn // optional
	cuMemFreeAsync              fn // optional
	cuMemPoolSetAttribute       fn // optional
	cuMemPoolGetAttribute       fn // optional
	cuMemPoolTrimTo             fn // optional
	cuStreamBeginCapture        fn // optional: graphs, CUDA 10.1+
	cuStreamEndCapture          fn // optional
	cuGraphInstantiate          fn // optional: cuGraphInstantiateWithFlags, CUDA 11.4+
	cuGraphGetNodes             fn // optional
	cuGraphLaunch               fn // optional
	cuGraphExecDestroy          fn // optional
	cuGraphDestroy              fn // optional
	// Graphs built node by node, for runs of queued launches
	// (rungraph.go). CUDA 12.0 added the _v2 forms, whose parameter
	// struct extends v1's at its end; older drivers have only v1.
	cuGraphCreate                    fn // optional
	cuGraphAddKernelNode             fn // optional
	cuGraphAddKernelNodeV1           fn // optional
	cuGraphExecKernelNodeSetParams   fn // optional
	cuGraphExecKernelNodeSetParamsV1 fn // optional
}

func (d *driverAPI) symbols() []symbol {
	return []symbol{
		{"cuInit", &d.cuInit, false},
		{"cuDriverGetVersion", &d.cuDriverGetVersion, false},
		{"cuGetErrorName", &d.cuGetErrorName, false},
		{"cuGetErrorString", &d.cuGetErrorString, false},
		{"cuDeviceGetCount", &d.cuDeviceGetCount, false},
		{"cuDeviceGet", &d.cuDeviceGet, false},
		{"cuDeviceGetName", &d.cuDeviceGetName, false},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute, false},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem, false},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain, false},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease, false},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent, false},
		{"cuCtxSynchronize", &d.cuCtxSynchronize, false},
		{"cuMemAlloc_v2", &d.cuMemAlloc, false},
		{"cuMemFree_v2", &d.cuMemFree, false},
		{"cuMemGetInfo_v2", &d.cuMemGetInfo, false},
		{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD, false},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH, false},
		{"cuMemcpyHtoDAsync_v2", &d.cuMemcpyHtoDAsync, false},
		{"cuMemcpy2DAsync_v2", &d.cuMemcpy2DAsync, true},
		{"cuMemcpyDtoHAsync_v2", &d.cuMemcpyDtoHAsync, false},
		{"cuMemcpyDtoDAsync_v2", &d.cuMemcpyDtoDAsync, false},
		{"cuMemsetD8Async", &d.cuMemsetD8Async, false},
		{"cuMemHostAlloc", &d.cuMemHostAlloc, false},
		{"cuMemFreeHost", &d.cuMemFreeHost, false},
		{"cuMemHostRegister_v2", &d.cuMemHostRegister, true},
		{"cuMemHostUnregister", &d.cuMemHostUnregister, true},
		{"cuMemHostGetDevicePointer_v2", &d.cuMemHostGetDevicePointer, true},
		{"cuStreamCreate", &d.cuStreamCreate, false},
		{"cuStreamCreateWithPriority", &d.cuStreamCreateWithPriority, true},
		{"cuCtxGetStreamPriorityRange", &d.cuCtxGetStreamPriorityRange, true},
		{"cuStreamGetPriority", &d.cuStreamGetPriority, true},
		{"cuStreamDestroy_v2", &d.cuStreamDestroy, false},
		{"cuStreamSynchronize", &d.cuStreamSynchronize, false},
		{"cuEventCreate", &d.cuEventCreate, false},
		{"cuEventDestroy_v2", &d.cuEventDestroy, false},
		{"cuEventRecord", &d.cuEventRecord, false},
		{"cuStreamWaitEvent", &d.cuStreamWaitEvent, false},
		{"cuEventSynchronize", &d.cuEventSynchronize, false},
		{"cuEventQuery", &d.cuEventQuery, false},
		// CUDA 12.8 added a _v2 with the same signature and CUDA 13's
		// header maps the plain name to it; older drivers only have v1.
		{"cuEventElapsedTime_v2", &d.cuEventElapsedTime, true},
		{"cuEventElapsedTime", &d.cuEventElapsedTimeV1, false},
		{"cuModuleLoadData", &d.cuModuleLoadData, false},
		{"cuModuleUnload", &d.cuModuleUnload, false},
		{"cuModuleGetFunction", &d.cuModuleGetFunction, false},
		{"cuFuncGetAttribute", &d.cuFuncGetAttribute, false},
		{"cuFuncSetAttribute", &d.cuFuncSetAttribute, false},
		{"cuLaunchKernel", &d.cuLaunchKernel, false},
		{"cuDeviceGetDefaultMemPool", &d.cuDeviceGetDefaultMemPool, true},
		{"cuMemAllocFromPoolAsync", &d.cuMemAllocFromPoolAsync, true},
		{"cuMemFreeAsync", &d.cuMemFreeAsync, true},
		{"cuMemPoolSetAttribute", &d.cuMemPoolSetAttribute, true},
		{"cuMemPoolGetAttribute", &d.cuMemPoolGetAttribute, true},
		{"cuMemPoolTrimTo", &d.cuMemPoolTrimTo, true},
		{"cuStreamBeginCapture_v2", &d.cuStreamBeginCapture, true},
		{"cuStreamEndCapture", &d.cuStreamEndCapture, true},
		{"cuGraphInstantiateWithFlags", &d.cuGraphInstantiate, true},
		{"cuGraphGetNodes", &d.cuGraphGetNodes, true},
		{"cuGraphLaunch", &d.cuGraphLaunch, true},
		{"cuGraphExecDestroy", &d.cuGraphExecDestroy, true},
		{"cuGraphDestroy", &d.cuGraphDestroy, true},
		{"cuGraphCreate", &d.cuGraphCreate, true},
		{"cuGraphAddKernelNode_v2", &d.cuGraphAddKernelNode, true},
		{"cuGraphAddKernelNode", &d.cuGraphAddKernelNodeV1, true},
		{"cuGraphExecKernelNodeSetParams_v2", &d.cuGraphExecKernelNodeSetParams, true},
		{"cuGraphExecKernelNodeSetParams", &d.cuGraphExecKernelNodeSetParamsV1, true},
	}
}

// Driver API constants, from cuda.h.
const (
	cuStreamNonBlocking  = 0x1 // CU_STREAM_NON_BLOCKING
	cuEventDefault       = 0x0 // CU_EVENT_DEFAULT: timing enabled
	cuEventDisableTiming = 0x2 // CU_EVENT_DISABLE_TIMING

	cuMemHostAllocPortable    = 0x1 // CU_MEMHOSTALLOC_PORTABLE
	cuMemHostAllocDeviceMap   = 0x2 // CU_MEMHOSTALLOC_DEVICEMAP
	cuMemHostRegisterPortable = 0x1 // CU_MEMHOSTREGISTER_PORTABLE

	// CUdevice_attribute
	attrMaxThreadsPerBlock      = 1
	attrMaxBlockDimX            = 2
	attrMaxBlockDimY            = 3
	attrMaxBlockDimZ            = 4
	attrMaxGridDimX             = 5
	attrMaxGridDimY             = 6
	attrMaxGridDimZ             = 7
	attrMaxSharedPerBlock       = 8
	attrWarpSize                = 10
	attrMaxRegistersPerBlock    = 12
	attrMultiprocessorCount     = 16
	attrComputeCapabilityMajor  = 75
	attrComputeCapabilityMinor  = 76
	attrMaxSharedPerBlockOptin  = 97
	attrMemoryPoolsSupported    = 115
	funcAttrMaxThreadsPerBlock  = 0 // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	funcAttrSharedSizeBytes     = 1 // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static)
	funcAttrMaxDynamicSharedMem = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	funcAttrPreferredCarveout   = 9 // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT

	memPoolAttrReleaseThreshold = 4 // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (cuuint64_t)
	memPoolAttrReservedCurrent  = 5 // CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT (cuuint64_t)
)
