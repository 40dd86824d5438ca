"""Peer of fragment.lua: the same fragmentation measurement with PyTorch's
caching allocator (impl "torch"), the same with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True ("torch-expandable"), and
CuPy's default memory pool ("cupy"), each in a process of its own: the
allocator configuration must be in the environment before CUDA starts, and
one allocator's cache must not crowd the next.
  python3 fragment.py [fill (default: 0.25 and 0.5)] [step_mib=64]
"""
import json
import os
import subprocess
import sys

MIB = 1 << 20
PATTERN = [1, 2, 1.5, 4, 0.5, 2, 1]  # MiB, as in fragment.lua
IMPLS = ("torch", "torch-expandable", "cupy")


def emit(**fields):
    # _peer.emit's format, without importing torch (the CuPy run needs none).
    print(json.dumps(dict(sorted(fields.items()))), flush=True)


def measure(empty, reserved, limit, fill, step):
    """Fill fill*limit with the pattern, drop every other array, and binary
    search, step bytes at a time, for the largest array that still fits."""
    arrays, total = [], 0
    while total < fill * limit:
        nbytes = int(PATTERN[len(arrays) % len(PATTERN)] * MIB)
        arrays.append(empty(nbytes // 4))
        total += nbytes
    count = len(arrays)
    for i in range(1, count, 2):  # fragment.lua's 2, 4, 6, ... (1-based)
        arrays[i] = None
    live = sum(a.nbytes for a in arrays if a is not None)
    before = reserved()
    warned = False
    lo, hi = 0, (limit - live) // step + 1  # lo steps fit, hi do not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            x = empty(mid * step // 4)
        except Exception as e:  # an out-of-memory error, or anything else: does not fit
            if not warned and "out of memory" not in str(e).lower():
                print(f"fragment.py: unexpected allocation error: {e}", file=sys.stderr)
                warned = True
            hi = mid
            continue
        del x  # freed at once, as fragment.lua's x:free()
        lo = mid
    return dict(fill=fill, step=step, arrays=count, limit=limit, live=live, reserved=before,
                largest=lo * step, ratio=lo * step / (limit - live))


def run(impl, fills, step):
    if impl.startswith("torch"):
        try:
            import torch
        except ImportError as e:
            print(f"torch unavailable: {e}", file=sys.stderr)
            return
        if not torch.cuda.is_available():
            return
        limit = torch.cuda.mem_get_info()[1]
        device = torch.cuda.get_device_name()
        strategy = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or "default"

        def empty(n):
            return torch.empty(n, dtype=torch.float32, device="cuda")

        reserved = torch.cuda.memory_reserved
    else:
        try:
            import cupy
            limit = cupy.cuda.runtime.memGetInfo()[1]
        except Exception as e:  # not installed, or no GPU
            print(f"cupy unavailable: {e}", file=sys.stderr)
            return
        name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        device = name.decode() if isinstance(name, bytes) else name
        strategy = "default memory pool"

        def empty(n):
            return cupy.empty(n, dtype=cupy.float32)

        reserved = cupy.get_default_memory_pool().total_bytes
    for fill in fills:
        emit(bench="fragment", impl=impl, device=device, strategy=strategy,
             **measure(empty, reserved, limit, fill, step))


def main():
    if len(sys.argv) > 1 and sys.argv[1] in IMPLS:  # a child: one allocator
        impl, args = sys.argv[1], sys.argv[2:]
        fills = [float(args[0])] if args else [0.25, 0.5]
        step = int(float(args[1]) * MIB) if len(args) > 1 else 64 * MIB
        run(impl, fills, step)
        return 0
    status = 0
    for impl in IMPLS:
        env = dict(os.environ)
        for key in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):  # the "torch" run is the default
            env.pop(key, None)
        if impl == "torch-expandable":
            env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        rc = subprocess.run([sys.executable, os.path.abspath(__file__), impl, *sys.argv[1:]], env=env).returncode
        if rc != 0:
            print(f"fragment.py: {impl} failed (exit status {rc})", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
