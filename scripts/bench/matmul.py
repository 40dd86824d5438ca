"""Peer of matmul.lua: torch.matmul at the same sizes, dtypes and precision."""
import sys

import torch

from _peer import device_time, emit, device_name

n32 = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
nbig = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
initial = torch.backends.cuda.preferred_blas_library()
for dtype, precision, n in [("float32", "default", n32), ("float32", "tf32", nbig), ("bfloat16", "default", nbig)]:
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    dt = getattr(torch, dtype)
    a = torch.rand(n, n, device="cuda", dtype=dt)
    b = torch.rand(n, n, device="cuda", dtype=dt)
    c = torch.empty(n, n, device="cuda", dtype=dt)
    # PyTorch may route a product through cuBLAS or cuBLASLt; time both where
    # it lets us choose, so a gap can be traced to the library's choice.
    for backend in ("default", "cublas", "cublaslt"):
        if backend != "default":
            try:
                torch.backends.cuda.preferred_blas_library(backend)
            except Exception as e:  # older PyTorch
                print(f"preferred_blas_library({backend!r}): {e}", file=sys.stderr)
                continue
        t = device_time(lambda: torch.matmul(a, b, out=c), reps=10, samples=5, warmup=3)
        impl = "torch" if backend == "default" else "torch-" + backend
        emit(bench="matmul", impl=impl, device=device_name(), dtype=dtype, precision=precision, n=n,
             ms=t * 1e3, tflops=2 * n**3 / t / 1e12)
    torch.backends.cuda.preferred_blas_library(initial)
    del a, b, c
