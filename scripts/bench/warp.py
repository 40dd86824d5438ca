"""Peer of warp.lua: the sum of the same number of float32 in PyTorch.

  warp_sum  x.sum(dtype=torch.float64).item() on 2^28 float32, host wall
            time per call (each returns its number, as kernels.sum and
            warp.lua's shuffle reduction do); GB/s counts the 4 * n bytes
            read.

    python3 warp.py [log2 elements]   (default 28, as warp.lua on the GPU)
"""
import sys

import torch

from _peer import wall_time, emit, device_name

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
reps, samples = 20, 5
x = torch.rand(n, dtype=torch.float32, device="cuda")
t = wall_time(lambda: x.sum(dtype=torch.float64).item(), reps, samples)
emit(bench="warp_sum", impl="pytorch", how="x.sum(dtype=float64).item()", device=device_name(), n=n,
     ms=t * 1e3, gbs=4 * n / t / 1e9)
