"""Peer of jit.lua: the same work in PyTorch, in the same JSON lines.

  jit_axpy          y.add_(x, alpha=a) on jit.lua's n, beside its kernels.map
                    and kernels.axpy (GB/s counts 3 * 4 * n bytes).
  jit_chain         y = ((a*x + b)*x - c) / d, jit.lua's chain: PyTorch eager
                    in place on a preallocated y (five kernels), eager out of
                    place (five kernels and a new tensor each), and
                    torch.compile of the out-of-place function where it works
                    (else a line with an "error" field). GB/s is effective
                    bandwidth, x read and y written once (2 * 4 * n bytes),
                    as in jit.lua. Target: glua's one kernels.map >= 3x
                    eager, and at most torch.compile's time.
  jit_first_launch  wall time of torch.compile's first call of the chain,
                    with its caches (inductor's and Triton's) in a fresh
                    temporary directory unless TORCHINDUCTOR_CACHE_DIR and
                    TRITON_CACHE_DIR are set: the peer of glua's first
                    launch on an empty kernel cache.
  graph100          100 tiny in-place adds on a 16-element tensor, launched
                    eagerly and captured once in a torch.cuda.CUDAGraph and
                    replayed: microseconds per kernel, host wall time around
                    a synchronised loop (the cost as the Python loop sees
                    it) and device time from CUDA events.

    python3 jit.py [log2 elements]   (default 28, as jit.lua on the GPU)
"""
import os
import sys
import tempfile
import time

# Before torch is imported: the compile caches are read from these.
_caches = tempfile.TemporaryDirectory(prefix="jit-bench-")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_caches.name, "inductor"))
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_caches.name, "triton"))

import torch  # noqa: E402

from _peer import device_time, wall_time, emit, device_name  # noqa: E402

n = 2 ** (int(sys.argv[1]) if len(sys.argv) > 1 else 28)
reps = 20
device = device_name()
alpha = 1e-3
ca, cb, cc, cd = 1.5, 0.25, 0.75, 2.0  # jit.lua's, as scripts/fused.lua's
# Eager kernels round as glua's do; generated code may contract a*x + b
# into one fused multiply-add, a rounding apart: DESIGN.md's float32 bound.
tolerance = 1e-5


def rel(u, v):
    """||u - v|| / ||v||, summed in float64."""
    diff = torch.linalg.vector_norm(u - v, dtype=torch.float64)
    return (diff / torch.linalg.vector_norm(v, dtype=torch.float64)).item()


def error_text(e):
    return f"{type(e).__name__}: {e}".splitlines()[0][:300]


x = torch.rand(n, device="cuda")

# jit_axpy: PyTorch's axpy on the same arrays' sizes.
y = torch.rand(n, device="cuda")
t = device_time(lambda: y.add_(x, alpha=alpha), reps=reps)
emit(bench="jit_axpy", impl="torch", how="add_(x, alpha)", device=device, n=n, ms=t * 1e3, gbs=3 * 4 * n / t / 1e9)
del y


# jit_chain: eager in place, eager out of place, torch.compile.
def chain(x):
    return ((x * ca + cb) * x - cc) / cd


out = torch.empty_like(x)


def chain_in_place():
    torch.mul(x, ca, out=out).add_(cb).mul_(x).sub_(cc).div_(cd)


chain_in_place()
want = out.clone()
nbytes = 2 * 4 * n
t = device_time(chain_in_place, reps=reps)
emit(bench="jit_chain", impl="torch", how="eager in place", device=device, n=n, ms=t * 1e3, gbs=nbytes / t / 1e9,
     launches=5)
err = rel(chain(x), want)
t = device_time(lambda: chain(x), reps=reps)
emit(bench="jit_chain", impl="torch", how="eager out of place", device=device, n=n, ms=t * 1e3,
     gbs=nbytes / t / 1e9, launches=5, rel_err=err, ok=err < tolerance)
del out

try:
    compiled = torch.compile(chain)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    got = compiled(x)  # traces, generates and compiles the kernel
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled(x)
    torch.cuda.synchronize()
    second = time.perf_counter() - t0
    emit(bench="jit_first_launch", impl="torch", how="torch.compile chain", device=device, ms=first * 1e3,
         second_ms=second * 1e3, cache_dir=os.environ["TORCHINDUCTOR_CACHE_DIR"])
    err = rel(got, want)
    del got
    t = device_time(lambda: compiled(x), reps=reps)
    emit(bench="jit_chain", impl="torch", how="torch.compile", device=device, n=n, ms=t * 1e3,
         gbs=nbytes / t / 1e9, rel_err=err, ok=err < tolerance)
except Exception as e:  # no Triton, no compiler, an unsupported GPU: say so and go on
    emit(bench="jit_chain", impl="torch", how="torch.compile", device=device, n=n, error=error_text(e))
del x, want

# 5. graph100: glua's side comes with cuda.graph (see jit.lua).
kernels = 100
small = torch.zeros(16, device="cuda")
one = torch.ones(16, device="cuda")


def hundred_adds():
    for _ in range(kernels):
        small.add_(one)


wall = wall_time(hundred_adds, reps=100)
dev = device_time(hundred_adds, reps=100)
emit(bench="graph100", impl="torch", how="eager", device=device, kernels=kernels,
     us_per_kernel=wall / kernels * 1e6, device_us_per_kernel=dev / kernels * 1e6)
try:
    # Capture warms up on a side stream first, as PyTorch's documentation
    # asks, so that nothing lazy happens inside the capture.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        hundred_adds()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        hundred_adds()
    small.zero_()
    graph.replay()
    torch.cuda.synchronize()
    ok = bool((small == kernels).all().item())
    wall = wall_time(graph.replay, reps=100)
    dev = device_time(graph.replay, reps=100)
    emit(bench="graph100", impl="torch", how="cuda graph", device=device, kernels=kernels,
         us_per_kernel=wall / kernels * 1e6, device_us_per_kernel=dev / kernels * 1e6, ok=ok)
except Exception as e:
    emit(bench="graph100", impl="torch", how="cuda graph", device=device, kernels=kernels, error=error_text(e))
