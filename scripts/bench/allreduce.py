"""Peer of allreduce.lua: torch.distributed.all_reduce (NCCL) of float32
sums from 8 B up to a largest size, doubling, timed as allreduce.lua times
them (warm-up, then the median of several samples of reps calls between
CUDA events, from a barrier; the slowest rank's time) and printed by rank 0
as one JSON line per size with nccl-tests' algbw and busbw.

    torchrun --nproc-per-node 2 scripts/bench/allreduce.py [max bytes]

max bytes is a number of bytes or one with KiB, MiB or GiB (default 1GiB).
"""
import os
import re
import statistics
import sys

import torch
import torch.distributed as dist

from _peer import emit, device_name

UNITS = {"": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def bytes_of(text):
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", text)
    if not m or m.group(2) not in UNITS:
        sys.exit(f"max bytes must be a whole number of bytes, KiB, MiB or GiB, got {text!r}")
    return int(m.group(1)) * UNITS[m.group(2)]


# Samples per size: enough that a median is not moved by one slow
# sample, which at 7 moved single sizes by up to a quarter between runs.
SAMPLES = 15


def reps_for(nbytes):
    if nbytes <= 2**20:
        return 50
    if nbytes <= 2**26:
        return 20
    return 5


def main():
    max_bytes = bytes_of(sys.argv[1] if len(sys.argv) > 1 else "1GiB")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    rank, size = dist.get_rank(), dist.get_world_size()
    elem = 4  # float32
    # Zeros: a sum's time does not depend on the values, and hundreds of
    # sums in place of random numbers would overflow to infinity.
    x = torch.zeros(max_bytes // elem, dtype=torch.float32, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    nbytes = 2 * elem
    while nbytes <= max_bytes:
        v = x[: nbytes // elem]
        reps = reps_for(nbytes)
        for _ in range(5):  # warm-up
            dist.all_reduce(v)
        times = []
        for _ in range(SAMPLES):
            dist.barrier()
            start.record()
            for _ in range(reps):
                dist.all_reduce(v)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / reps)
        slowest = torch.tensor([statistics.median(times)], dtype=torch.float64, device="cuda")
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        secs = slowest.item()
        algbw = nbytes / secs / 1e9
        if rank == 0:
            emit(bench="all_reduce", impl="torch", device=device_name(), backend="cuda",
                 ranks=size, dtype="float32", op="sum", bytes=nbytes, us=secs * 1e6,
                 algbw_gbs=algbw, busbw_gbs=algbw * 2 * (size - 1) / size)
        nbytes *= 2
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
