"""Peer of transfer.lua: copies into existing tensors from pinned and pageable host memory,
and downloads into a new tensor (d.cpu(), dropped each time) beside the pageable one into an
existing tensor of the same run.

    python3 transfer.py [MiB ...]   (default 256 and 1024, as transfer.lua on the GPU)
"""
import sys
import time

import torch

from _peer import wall_time, emit, device_name

sizes = [int(a) for a in sys.argv[1:]] or [256, 1024]
for mib in sizes:
    n = mib * 1024 * 1024 // 4
    d = torch.rand(n, device="cuda")
    existing = None
    for pinned in (True, False):
        h = torch.empty(n, pin_memory=pinned)
        h.copy_(d)
        up = wall_time(lambda: d.copy_(h), reps=10)
        down = wall_time(lambda: h.copy_(d), reps=10)
        kind = "pinned" if pinned else "pageable"
        emit(bench="h2d", impl="torch", device=device_name(), host=kind, mib=mib, gbs=4 * n / up / 1e9)
        emit(bench="d2h", impl="torch", device=device_name(), host=kind, mib=mib, gbs=4 * n / down / 1e9)
        if not pinned:
            existing = 4 * n / down / 1e9
        del h
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    d.cpu()
    torch.cuda.synchronize()
    first = 4 * n / (time.perf_counter() - t0) / 1e9
    new = 4 * n / wall_time(lambda: d.cpu(), reps=10) / 1e9
    emit(bench="d2h_new", impl="torch", device=device_name(), host="new", mib=mib, gbs=new,
         existing_gbs=existing, of_existing=new / existing, first_gbs=first)
    del d
