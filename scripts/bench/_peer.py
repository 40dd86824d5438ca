"""Shared by the peer benchmarks: timing like _bench.lua, JSON lines."""
import json
import statistics
import time

import torch


def device_time(fn, reps, samples=5, warmup=2):
    """Median device seconds of one call, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(samples):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(times)


def wall_time(fn, reps, samples=5, warmup=2):
    """Median host seconds of one call, synchronizing after each sample."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / reps)
    return statistics.median(times)


def emit(**fields):
    print(json.dumps(dict(sorted(fields.items()))), flush=True)


def device_name():
    return torch.cuda.get_device_name()
