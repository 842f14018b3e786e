#!/usr/bin/env bash
# The verifier under load and what one session costs it (docs/benchmarks.md, "The verifier
# under load" and "What a session costs the verifier"): runs `tlsproof bench load` in the
# documented cases and writes what each printed to benches/results/load/. About 5 minutes on
# a 2-core machine. Usage: scripts/bench-load.sh [tlsproof binary]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/tlsproof}
out=benches/results/load
mkdir -p "$out"
run() { # name, flags…
  local name=$1; shift
  echo "== $name: bench load $*"
  "$bin" bench load "$@" | tee "$out/$name.txt" | grep -E "^(load:|provers:|verified sessions:|wall time)"
}
# The service: defaults but for --max-per-ip (every client is 127.0.0.1).
run fast-200-hostile-300 --provers 200 --hostile 300
run redacted51k-20-hostile-300 --provers 20 --hostile 300 --response 51200 --redacted
run fast-burst-1000 --provers 1000 --hostile 0 --record-flooders 0
run mpc-fast-40-flooders-40 --provers 40 --hostile 0 --record-flooders 40 --mpc
# One session's footprint: eight sessions of a kind, one at a time and all at once.
for kind in "proxy-fast-1k:--response 1024" "proxy-redacted-1k:--response 1024 --redacted" \
  "proxy-redacted-51k:--response 51200 --redacted" "mpc-fast-1k:--response 1024 --mpc" \
  "mpc-redacted-1k:--response 1024 --mpc --redacted" "mpc-redacted-51k:--response 51200 --mpc --redacted"; do
  name=${kind%%:*}; flags=${kind#*:}
  for at_once in 1 8; do
    # shellcheck disable=SC2086
    run "footprint-$name-$at_once" --provers 8 --hostile 0 --record-flooders 0 --max-sessions "$at_once" \
      --memory-budget 64G --max-proving 8 $flags
  done
done
