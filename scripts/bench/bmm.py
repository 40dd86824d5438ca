"""Peer of bmm.lua: torch.bmm at the same batches, sizes and dtypes."""
import sys

import torch

from _peer import device_time, emit, device_name

small = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
large = int(sys.argv[2]) if len(sys.argv) > 2 else 64
torch.backends.cuda.matmul.allow_tf32 = False  # glua's float32 default: no tf32
for dtype in ("float32", "bfloat16"):
    dt = getattr(torch, dtype)
    for batch, n in ((small, 64), (large, 512)):
        a = torch.rand(batch, n, n, device="cuda", dtype=dt)
        b = torch.rand(batch, n, n, device="cuda", dtype=dt)
        c = torch.empty(batch, n, n, device="cuda", dtype=dt)
        # bmm.lua's reps: longer samples for the products of a few microseconds
        t = device_time(lambda: torch.bmm(a, b, out=c), reps=200 if n <= 64 else 20, samples=5, warmup=3)
        emit(bench="bmm", impl="torch", device=device_name(), dtype=dtype, batch=batch, n=n,
             ms=t * 1e3, tflops=2 * batch * n**3 / t / 1e12)
        del a, b, c
