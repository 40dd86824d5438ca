#!/usr/bin/env bash
# Runs every benchmark and its PyTorch/CuPy peer back to back on this
# machine's GPU and collects the JSON lines in one file.
#   scripts/bench/run.sh [glua binary] [output file]
# A script with a line "-- nproc: N" needs N processes and is skipped here;
# allreduce.lua and its peer are run on two GPUs by hand, rank 0's lines
# (glua --nproc prefixes them "[0] ") appended to the same file:
#   glua --nproc 2 scripts/bench/allreduce.lua | sed 's/^\[0\] //' >>bench.jsonl
#   (cd scripts/bench && torchrun --nproc-per-node 2 allreduce.py) >>bench.jsonl
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
glua="${1:-glua}"
out="${2:-bench.jsonl}"
: >"$out"
status=0
for lua in "$here"/[!_]*.lua; do
  name="$(basename "$lua" .lua)"
  if grep -q '^-- nproc: ' "$lua"; then
    echo "== $name: skipped, it needs several processes (see the top of run.sh)" >&2
    continue
  fi
  echo "== $name" >&2
  if [ "$name" = jit ]; then
    # First launches that translate and compile: a kernel cache of its own,
    # empty. A second run on it should compile nothing; of that run only
    # its jit_cache line (run = 2) is kept.
    cache="$(mktemp -d)"
    GLUA_KERNEL_CACHE="$cache" "$glua" "$lua" | tee -a "$out" || status=1
    GLUA_KERNEL_CACHE="$cache" "$glua" "$lua" "" "" 2 | grep '"bench": "jit_cache"' | tee -a "$out" || status=1
    rm -rf "$cache"
  else
    "$glua" "$lua" | tee -a "$out" || status=1
  fi
  if [ -f "$here/$name.py" ]; then
    (cd "$here" && python3 "$name.py") | tee -a "$out" || status=1
  fi
done
# The elementwise kernels' launch shapes, in CUDA C beside glua (needs nvcc):
# the numbers kernels.ElementwiseShape's constants are chosen from.
if command -v nvcc >/dev/null; then
  echo "== shape" >&2
  bin="$(mktemp -d)"
  if nvcc -O3 -arch=native -std=c++17 -o "$bin/shape" "$here/shape.cu"; then
    "$bin/shape" | grep '^{' | tee -a "$out" || status=1
  else
    status=1
  fi
  rm -rf "$bin"
fi
# A second run of a script compiles nothing: its kernels come from the cache.
"$glua" -e 'local k = require("kernels"); local c = require("cuda"); local x = c.rand(1024); k.scale(x, 2); k.sum(x)
  local s = k.cache_stats(); print(string.format("{\"bench\": \"kernel_cache\", \"impl\": \"glua\", \"compiles\": %d, \"cache_hits\": %d}", s.compiles, s.cache_hits))' | tee -a "$out" || status=1
exit $status
