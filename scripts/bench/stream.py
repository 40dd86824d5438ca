"""Peer of stream.lua: host batches streamed to the GPU the PyTorch way
(pinned tensors, non_blocking copies on a side stream, the next batch
copied while the current one computes), and the naive way (a pageable
upload each batch)."""
import os
import sys
import tempfile
import warnings

import numpy as np
import torch

from _peer import wall_time, emit, device_name

# torch.from_numpy warns that a read-only memory map is not writable; the
# rows are only read.
warnings.filterwarnings("ignore", message="The given NumPy array is not writable")

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 64
count = int(sys.argv[2]) if len(sys.argv) > 2 else 128
n = mib * 1024 * 1024 // 4
total = 4 * n * count
d = torch.rand(n, device="cuda")
side = int(n ** 0.5)


def batches(pinned):
    out = []
    for _ in range(count):
        h = torch.empty(n, pin_memory=pinned)
        h.copy_(d)
        out.append(h)
    return out


copy_stream = torch.cuda.Stream()


def stream(hosts, body):
    with torch.cuda.stream(copy_stream):
        nxt = hosts[0].to("cuda", non_blocking=True)
    for i in range(len(hosts)):
        torch.cuda.current_stream().wait_stream(copy_stream)
        cur = nxt
        cur.record_stream(torch.cuda.current_stream())
        if i + 1 < len(hosts):
            with torch.cuda.stream(copy_stream):
                nxt = hosts[i + 1].to("cuda", non_blocking=True)
        body(cur)


pinned = batches(True)
plain = wall_time(lambda: [d.copy_(h) for h in pinned], reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="copy_ pinned", gib=total / 2**30, gbs=total / plain / 1e9)
t = wall_time(lambda: stream(pinned, lambda x: None), reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="side-stream pinned", gib=total / 2**30, gbs=total / t / 1e9, fraction_of_copy=plain / t)
pageable = batches(False)
t = wall_time(lambda: [h.to("cuda") for h in pageable], reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="naive pageable", gib=total / 2**30, gbs=total / t / 1e9, fraction_of_copy=plain / t)


class Batches(torch.utils.data.Dataset):
    def __init__(self, xs):
        self.xs = xs

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i]


def loader(xs):
    # batch_size=None hands each item over as it is; pin_memory=True copies
    # it into page-locked memory before the loop body gets it.
    for h in torch.utils.data.DataLoader(Batches(xs), batch_size=None, pin_memory=True):
        h.to("cuda", non_blocking=True)


t = wall_time(lambda: loader(pageable), reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="DataLoader pin_memory pageable", gib=total / 2**30, gbs=total / t / 1e9, fraction_of_copy=plain / t)

# the same bytes from a memory-mapped .npy in the page cache (NumPy's mmap_mode)
path = tempfile.mktemp(suffix=".npy")
np.save(path, torch.stack(pageable).numpy())
del pageable
m = np.load(path, mmap_mode="r")
rows = [torch.from_numpy(m[i]) for i in range(count)]
t = wall_time(lambda: [r.to("cuda") for r in rows], reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="naive mmap npy", gib=total / 2**30, gbs=total / t / 1e9, fraction_of_copy=plain / t)
t = wall_time(lambda: loader(rows), reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="DataLoader pin_memory mmap npy", gib=total / 2**30, gbs=total / t / 1e9, fraction_of_copy=plain / t)
del rows, m
os.remove(path)

torch.backends.cuda.matmul.allow_tf32 = True
W, C = torch.rand(side, side, device="cuda"), torch.zeros(side, side, device="cuda")
x = torch.rand(side, side, device="cuda")
one = wall_time(lambda: torch.mm(x, W, out=C), reps=4, samples=3)
reps = max(1, round(plain / count / one))
compute = wall_time(lambda: [torch.mm(x, W, out=C) for _ in range(count * reps)], reps=1, samples=3, warmup=1)
both = wall_time(lambda: stream(pinned, lambda b: [torch.mm(b.view(side, side), W, out=C) for _ in range(reps)]), reps=1, samples=3, warmup=1)
emit(bench="stream", impl="torch", device=device_name(), how="side-stream pinned + matmul", gib=total / 2**30,
     products_per_batch=reps, copy_s=plain, compute_s=compute, total_s=both, of_larger=both / max(plain, compute))
