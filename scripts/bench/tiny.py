"""Peer of tiny.lua: PyTorch's in-place add_ on a tiny tensor from a Python loop."""
import sys

import torch

from _peer import wall_time, emit, device_name

calls = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
x = torch.rand(16, device="cuda")
y = torch.rand(16, device="cuda")
per_op = wall_time(lambda: x.add_(y), reps=calls)
emit(bench="tiny_add", impl="torch", device=device_name(), calls=calls, us_per_op=per_op * 1e6)
