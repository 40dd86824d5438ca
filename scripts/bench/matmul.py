"""Peer of matmul.lua: torch.matmul at the same sizes, dtypes and precision."""
import sys

import torch

from _peer import device_time, emit, device_name

n32 = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
nbig = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
for dtype, precision, n in [("float32", "default", n32), ("float32", "tf32", nbig), ("bfloat16", "default", nbig)]:
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    dt = getattr(torch, dtype)
    a = torch.rand(n, n, device="cuda", dtype=dt)
    b = torch.rand(n, n, device="cuda", dtype=dt)
    c = torch.empty(n, n, device="cuda", dtype=dt)
    t = device_time(lambda: torch.matmul(a, b, out=c), reps=10, samples=5, warmup=3)
    emit(bench="matmul", impl="torch", device=device_name(), dtype=dtype, precision=precision, n=n,
         ms=t * 1e3, tflops=2 * n**3 / t / 1e12)
    del a, b, c
