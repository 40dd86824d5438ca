"""Peer of random.lua: torch.rand and torch.randn of 2^28 float32 on the
GPU, each result dropped at once (PyTorch's caching allocator keeps its
memory), device time per call from CUDA events.

    python3 random.py [log2 elements]   (default 28, as random.lua on the GPU)
"""
import sys

import torch

from _peer import device_time, emit, device_name

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
reps, samples = 20, 5
times = {}
for name, gen in (("rand", torch.rand), ("randn", torch.randn)):
    times[name] = device_time(lambda: gen(n, dtype=torch.float32, device="cuda"), reps, samples)
    extra = {"randn_over_rand": times["randn"] / times["rand"]} if name == "randn" else {}
    emit(bench=name, impl="pytorch", device=device_name(), dtype="float32", n=n, ms=times[name] * 1e3,
         gbs=4 * n / times[name] / 1e9, **extra)
