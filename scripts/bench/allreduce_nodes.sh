#!/usr/bin/env bash
# all_reduce between two nodes simulated on one host of two GPUs, the path
# a cluster's ranks take: two launchers, one GPU each (CUDA_VISIBLE_DEVICES
# split between them), and NCCL kept off the GPUs' direct and shared-memory
# paths (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1), so that it moves the data
# over its network transport. glua's two launchers (--nnodes 2) and then
# torch.distributed's (torchrun --nnodes 2) run allreduce.lua and its peer
# allreduce.py with the same settings; rank 0's JSON lines, each with
# "nodes": 2 added, go to stdout.
#   scripts/bench/allreduce_nodes.sh [glua binary] [max bytes] [port]
# max bytes as allreduce.lua takes it (default 1GiB); the launchers meet
# on port and port+1 (default 29500), the ranks on the ports after them.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
glua="${1:-glua}"
max="${2:-1GiB}"
port="${3:-29500}"
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
status=0
tag() { sed -e 's/^\[0\] //' -e 's/^{/{"nodes": 2, /'; }

# node R of a two-node job: its launcher, on GPU R.
glua_node() {
  CUDA_VISIBLE_DEVICES="$1" "$glua" --nnodes 2 --node-rank "$1" --master-addr 127.0.0.1 \
    --master-port "$port" --nproc-per-node 1 "$here/allreduce.lua" "$max"
}
glua_node 1 >/dev/null &
one=$!
glua_node 0 | grep '^\[0\] {' | tag || status=1
wait "$one" || status=1

torch_node() {
  (cd "$here" && CUDA_VISIBLE_DEVICES="$1" torchrun --nnodes 2 --node-rank "$1" --master-addr 127.0.0.1 \
    --master-port "$((port + 2))" --nproc-per-node 1 allreduce.py "$max")
}
torch_node 1 >/dev/null &
one=$!
torch_node 0 | grep '^{' | tag || status=1
wait "$one" || status=1
exit "$status"
