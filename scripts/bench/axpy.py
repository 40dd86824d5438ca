"""Peer of axpy.lua: y.add_(x, alpha=a) and a device-to-device copy."""
import sys

import torch

from _peer import device_time, emit, device_name

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
x = torch.rand(n, device="cuda")
y = torch.rand(n, device="cuda")
z = torch.empty(n, device="cuda")
copy = device_time(lambda: z.copy_(x), reps=20)
axpy = device_time(lambda: y.add_(x, alpha=1e-3), reps=20)
copy_gbs, axpy_gbs = 2 * 4 * n / copy / 1e9, 3 * 4 * n / axpy / 1e9
emit(bench="copy_d2d", impl="torch", device=device_name(), n=n, ms=copy * 1e3, gbs=copy_gbs)
emit(bench="axpy", impl="torch", device=device_name(), n=n, ms=axpy * 1e3, gbs=axpy_gbs,
     fraction_of_copy=axpy_gbs / copy_gbs)
