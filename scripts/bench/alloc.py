"""Peer of alloc.lua: allocate and free 1 MiB from a Python loop, PyTorch and CuPy."""
import sys
import time

import torch

from _peer import emit, device_name

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200000


def per_op(fn):
    for _ in range(1000):
        fn()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best.append((time.perf_counter() - t0) / calls)
    best.sort()
    return best[len(best) // 2]


emit(bench="alloc_free_1mib", impl="torch", device=device_name(), calls=calls,
     us_per_op=per_op(lambda: torch.empty(262144, device="cuda")) * 1e6)
try:
    import cupy

    emit(bench="alloc_free_1mib", impl="cupy", device=device_name(), calls=calls,
         us_per_op=per_op(lambda: cupy.empty(262144, dtype=cupy.float32)) * 1e6)
except ImportError as e:
    print(f"cupy unavailable: {e}", file=sys.stderr)
