#!/usr/bin/env bash
# Runs each cargo-fuzz target for a bounded time (default 60 s each). Not part of CI.
#   scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install -q cargo-fuzz
for t in tls_client_input tls_parsers tls13_client_input tls13_parsers any_version_client_input http_response attestation statements; do
  echo "== fuzz $t for ${secs}s =="
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$t" -- -max_total_time="$secs"
done
