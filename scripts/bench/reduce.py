"""Peer of reduce.lua: torch.sum, torch.linalg.norm and (a - b).abs().max()
of 2^28 elements in float32, float64, int32, float16 and bfloat16, and
for float32 also torch.sum(dtype=torch.float64), the accumulation glua
does, and torch.sum(x, dim, dtype=float32) along each axis of three 2-D
shapes of the float32, float16 and bfloat16 elements (reduce_axis lines,
axis 1 for dim 0, as reduce.lua numbers them). Each case runs twice:
with the result left on the device (the kernels' time alone), and as
<case>_item with .item(), which waits for the number as a glua
reduction, which returns a Lua number, always does. Each line has both
clocks: ms (device time per call from CUDA events) and wall_ms (host
time per call, synchronizing after each sample), as reduce.lua's.

    python3 reduce.py [log2 elements] [dtype,...]
"""
import sys

import torch

from _peer import device_name, device_time, emit, wall_time

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "float32,float64,int32,float16,bfloat16").split(",")
reps, samples = 10, 5


def random(dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if dtype.is_floating_point:
        return torch.rand(n, dtype=dtype, device="cuda", generator=g)
    return torch.randint(0, 2 ** 20, (n,), dtype=dtype, device="cuda", generator=g)


for name in dtypes:
    dtype = getattr(torch, name)
    x, y = random(dtype, 1), random(dtype, 2)
    nbytes = x.element_size() * n
    cases = [("sum", lambda: torch.sum(x), nbytes)]
    if dtype == torch.float32:
        cases.append(("sum_float64", lambda: torch.sum(x, dtype=torch.float64), nbytes))
    if dtype.is_floating_point:
        cases.append(("norm", lambda: torch.linalg.norm(x), nbytes))
    cases.append(("max_abs_diff", lambda: (x - y).abs().max(), 2 * nbytes))
    cases += [(case + "_item", lambda fn=fn: fn().item(), read) for case, fn, read in cases]
    for case, fn, read in cases:
        t = device_time(fn, reps, samples)
        w = wall_time(fn, reps, samples)
        emit(bench="reduce_" + case, impl="pytorch", device=device_name(), dtype=name, n=n, ms=t * 1e3,
             gbs=read / t / 1e9, wall_ms=w * 1e3, wall_gbs=read / w / 1e9, value=float(fn()))
    del x, y
    torch.cuda.empty_cache()

side = 2 ** (n.bit_length() // 2)
for name in dtypes:
    if name not in ("float32", "float16", "bfloat16"):
        continue
    x = random(getattr(torch, name), 3)
    for rows, cols in ((side, n // side), (n // 256, 256), (256, n // 256)):
        m = x.view(rows, cols)
        for axis in (1, 2):
            out = torch.empty(cols if axis == 1 else rows, device="cuda")
            t = device_time(lambda: torch.sum(m, dim=axis - 1, dtype=torch.float32, out=out), reps, samples)
            emit(bench="reduce_axis", impl="pytorch", device=device_name(), dtype=name, rows=rows, cols=cols,
                 axis=axis, ms=t * 1e3, gbs=x.element_size() * n / t / 1e9, first=float(out[0]))
    del x
