package cuda

// nvrtcAPI holds the NVRTC functions glua calls.
type nvrtcAPI struct {
	nvrtcVersion              fn
	nvrtcGetErrorString       fn
	nvrtcCreateProgram        fn
	nvrtcDestroyProgram       fn
	nvrtcCompileProgram       fn
	nvrtcGetProgramLogSize    fn
	nvrtcGetProgramLog        fn
	nvrtcGetPTXSize           fn
	nvrtcGetPTX               fn
	nvrtcGetCUBINSize         fn // optional: NVRTC 11.1+
	nvrtcGetCUBIN             fn // optional
	nvrtcGetNumSupportedArchs fn // optional: NVRTC 11.2+
	nvrtcGetSupportedArchs    fn // optional
}

func (n *nvrtcAPI) symbols() []symbol {
	return []symbol{
		{"nvrtcVersion", &n.nvrtcVersion, false},
		{"nvrtcGetErrorString", &n.nvrtcGetErrorString, false},
		{"nvrtcCreateProgram", &n.nvrtcCreateProgram, false},
		{"nvrtcDestroyProgram", &n.nvrtcDestroyProgram, false},
		{"nvrtcCompileProgram", &n.nvrtcCompileProgram, false},
		{"nvrtcGetProgramLogSize", &n.nvrtcGetProgramLogSize, false},
		{"nvrtcGetProgramLog", &n.nvrtcGetProgramLog, false},
		{"nvrtcGetPTXSize", &n.nvrtcGetPTXSize, false},
		{"nvrtcGetPTX", &n.nvrtcGetPTX, false},
		{"nvrtcGetCUBINSize", &n.nvrtcGetCUBINSize, true},
		{"nvrtcGetCUBIN", &n.nvrtcGetCUBIN, true},
		{"nvrtcGetNumSupportedArchs", &n.nvrtcGetNumSupportedArchs, true},
		{"nvrtcGetSupportedArchs", &n.nvrtcGetSupportedArchs, true},
	}
}

// cublasAPI holds the cuBLAS functions glua calls. cublas_api.h maps the
// classic names to _v2 symbols; GemmEx and GetProperty were never versioned.
type cublasAPI struct {
	cublasCreate               fn
	cublasDestroy              fn
	cublasSetStream            fn
	cublasSetWorkspace         fn
	cublasGemmEx               fn
	cublasGemmStridedBatchedEx fn
	cublasGetProperty          fn
	cublasGetStatusName        fn // optional: cuBLAS 11.4+
	cublasGetStatusString      fn // optional
}

func (c *cublasAPI) symbols() []symbol {
	return []symbol{
		{"cublasCreate_v2", &c.cublasCreate, false},
		{"cublasDestroy_v2", &c.cublasDestroy, false},
		{"cublasSetStream_v2", &c.cublasSetStream, false},
		{"cublasSetWorkspace_v2", &c.cublasSetWorkspace, false},
		{"cublasGemmEx", &c.cublasGemmEx, false},
		{"cublasGemmStridedBatchedEx", &c.cublasGemmStridedBatchedEx, false},
		{"cublasGetProperty", &c.cublasGetProperty, false},
		{"cublasGetStatusName", &c.cublasGetStatusName, true},
		{"cublasGetStatusString", &c.cublasGetStatusString, true},
	}
}

// cuBLAS and library_types.h constants.
const (
	cublasOpN = 0 // CUBLAS_OP_N
	cublasOpT = 1 // CUBLAS_OP_T

	cudaR32F  = 0  // CUDA_R_32F
	cudaR64F  = 1  // CUDA_R_64F
	cudaR16F  = 2  // CUDA_R_16F
	cudaR16BF = 14 // CUDA_R_16BF

	cublasCompute32F         = 68 // CUBLAS_COMPUTE_32F
	cublasCompute32FFastTF32 = 77 // CUBLAS_COMPUTE_32F_FAST_TF32
	cublasCompute64F         = 70 // CUBLAS_COMPUTE_64F

	cublasGemmDefault = -1 // CUBLAS_GEMM_DEFAULT

	// libraryPropertyType
	propMajor = 0
	propMinor = 1
	propPatch = 2
)
