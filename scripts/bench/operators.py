"""Peer of operators.lua: torch's a + b, a new tensor each time, against
c.add_(a) in place, on 2^28 float32, then c.add_(a) on float64, float16,
bfloat16, int32, int64 and uint8, then dst.copy_(src) between dtypes and
fill_ on float32, in the same JSON lines."""
import sys

import torch

from _peer import device_time, wall_time, emit, device_name

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
a = torch.rand(n, device="cuda")
b = torch.rand(n, device="cuda")
c = torch.rand(n, device="cuda")
nbytes = 3 * 4 * n


def add_in_place():
    c.add_(a)


def add_dropped():
    a + b  # freed at once by its reference count, into the caching allocator


inplace, inplace_wall = device_time(add_in_place, reps=20), wall_time(add_in_place, reps=20)
gbs, wall_gbs = nbytes / inplace / 1e9, nbytes / inplace_wall / 1e9
emit(bench="add_in_place", impl="torch", dtype="float32", device=device_name(), n=n, ms=inplace * 1e3, gbs=gbs,
     wall_gbs=wall_gbs)
t, wall = device_time(add_dropped, reps=20), wall_time(add_dropped, reps=20)
emit(bench="add_operator", impl="torch", result="dropped", device=device_name(), n=n, ms=t * 1e3,
     gbs=nbytes / t / 1e9, wall_gbs=nbytes / wall / 1e9,
     fraction_of_in_place=(nbytes / t / 1e9) / gbs, wall_fraction_of_in_place=(nbytes / wall / 1e9) / wall_gbs)
del a, b, c

for dtype in (torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8):
    size = dtype.itemsize
    lo = 0 if dtype == torch.uint8 else -1000
    hi = 250 if dtype == torch.uint8 else 1000
    xi = torch.randint(lo, hi, (n,), device="cuda").to(dtype)
    zi = torch.randint(lo, hi, (n,), device="cuda").to(dtype)
    t = device_time(lambda: zi.add_(xi), reps=20)
    ibytes = 3 * size * n
    emit(bench="add_in_place", impl="torch", dtype=str(dtype).removeprefix("torch."), device=device_name(), n=n,
         ms=t * 1e3, gbs=ibytes / t / 1e9, fraction_of_float32=(ibytes / t / 1e9) / gbs)
    del xi, zi

pairs = [("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"), ("float32", "float64"),
         ("float64", "float32"), ("float32", "int32"), ("int32", "float32"), ("uint8", "float32"), ("float32", "uint8")]
for a_name, b_name in pairs:
    a_dt, b_dt = getattr(torch, a_name), getattr(torch, b_name)
    src = (torch.rand(n, device="cuda") * 200).to(a_dt)
    dst = torch.empty(n, device="cuda", dtype=b_dt)
    t = device_time(lambda: dst.copy_(src), reps=20)
    emit(bench="copy_convert", impl="torch", device=device_name(), n=n, ms=t * 1e3,
         gbs=(a_dt.itemsize + b_dt.itemsize) * n / t / 1e9, **{"from": a_name, "to": b_name})
    del src, dst
f = torch.empty(n, device="cuda")
t = device_time(lambda: f.fill_(1.5), reps=20)
emit(bench="fill", impl="torch", dtype="float32", device=device_name(), n=n, ms=t * 1e3, gbs=4 * n / t / 1e9)
