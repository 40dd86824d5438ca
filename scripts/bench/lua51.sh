#!/usr/bin/env bash
# glua against the reference interpreter on plain Lua: loading big table
# literals and the kernels of plain.lua. Each case runs as a whole process,
# glua and lua5.1 in turn, RUNS times; the table shows median wall seconds.
#   scripts/bench/lua51.sh [glua binary] [runs]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
glua="${1:-glua}"
runs="${2:-5}"
lua51="${LUA51:-lua5.1}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# literal N: a file holding one N-element numeric literal, as pasted data.
literal() {
  local file="$tmp/literal_$1.lua"
  { printf 'local t = {'; seq -f '%.1f,' 1 "$1" | tr -d '\n'; printf '}\nprint(#t)\n'; } >"$file"
  echo "$file"
}

# wall CMD...: seconds the command took, or "fail" if it exited non-zero.
wall() {
  local start end
  start=$(date +%s%N)
  if ! "$@" >/dev/null 2>&1; then
    echo fail
    return
  fi
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }

# compare NAME ARGS...: runs both interpreters on ARGS, alternating.
compare() {
  local name="$1"
  shift
  local g=() l=() i
  for ((i = 0; i < runs; i++)); do
    g+=("$(wall "$glua" "$@")")
    l+=("$(wall "$lua51" "$@")")
  done
  local gm lm
  gm=$(printf '%s\n' "${g[@]}" | grep -v fail | median)
  lm=$(printf '%s\n' "${l[@]}" | grep -v fail | median)
  [[ " ${g[*]} " == *" fail "* ]] && gm="fails"
  [[ " ${l[*]} " == *" fail "* ]] && lm="fails"
  local ratio="-"
  if [[ "$gm" != fails && "$lm" != fails ]]; then
    ratio=$(awk -v a="$gm" -v b="$lm" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }')
  fi
  printf '| %s | %s | %s | %s |\n' "$name" "$gm" "$lm" "$ratio"
}

echo "| case | glua s | lua5.1 s | glua / lua5.1 |"
echo "| --- | --- | --- | --- |"
for n in 10000 100000 1000000; do
  compare "load a ${n}-element literal" "$(literal "$n")"
done
for k in numeric strings concat inserts calls; do
  compare "plain.lua $k" "$here/plain.lua" "$k"
done
