"""Peer of transfer.lua: copies into existing tensors from pinned and pageable host memory."""
import sys

import torch

from _peer import wall_time, emit, device_name

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 256
n = mib * 1024 * 1024 // 4
d = torch.rand(n, device="cuda")
for pinned in (True, False):
    h = torch.empty(n, pin_memory=pinned)
    h.copy_(d)
    up = wall_time(lambda: d.copy_(h), reps=10)
    down = wall_time(lambda: h.copy_(d), reps=10)
    kind = "pinned" if pinned else "pageable"
    emit(bench="h2d", impl="torch", device=device_name(), host=kind, mib=mib, gbs=4 * n / up / 1e9)
    emit(bench="d2h", impl="torch", device=device_name(), host=kind, mib=mib, gbs=4 * n / down / 1e9)
