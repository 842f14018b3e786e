#!/usr/bin/env bash
# Everything: native tests, browser tests in headless Chrome, and the end-to-end demo run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh

echo "== native: cargo test --release =="
cargo test --release

echo "== browser: wasm-pack test --headless --chrome =="
cargo build --release --bin tlsproof
run=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$run"; }
trap cleanup EXIT
bin="${CARGO_TARGET_DIR:-target}/release/tlsproof"
$bin echo-server --listen 127.0.0.1:0 --addr-file "$run/echo" >/dev/null & pids+=($!)
$bin fixture-server --listen 127.0.0.1:0 --addr-file "$run/fixture" --ca-out "$run/ca.pem" >/dev/null & pids+=($!)
for f in echo fixture; do for _ in $(seq 100); do [ -s "$run/$f" ] && break; sleep 0.1; done; done
$bin proxy --listen 127.0.0.1:0 --allow "$(cat "$run/echo"),$(cat "$run/fixture")" --addr-file "$run/proxy" >/dev/null & pids+=($!)
$bin verifier --listen 127.0.0.1:0 --allow "$(cat "$run/fixture")" --roots "$run/ca.pem" --addr-file "$run/verifier" >/dev/null & pids+=($!)
for f in proxy verifier; do for _ in $(seq 100); do [ -s "$run/$f" ] && break; sleep 0.1; done; done
export TLSPROOF_TEST_PROXY="ws://$(cat "$run/proxy")/"
export TLSPROOF_TEST_ECHO="$(cat "$run/echo")"
export TLSPROOF_TEST_VERIFIER="ws://$(cat "$run/verifier")/"
export TLSPROOF_TEST_FIXTURE="$(cat "$run/fixture")"
export TLSPROOF_TEST_CA="$(cat "$run/ca.pem")"
export WASM_BINDGEN_TEST_TIMEOUT=300
# shellcheck disable=SC2086
env $TLSPROOF_WASM_ENV wasm-pack --log-level warn test --headless --chrome --chromedriver /usr/bin/chromedriver --release .

echo "== end to end: the demo page in headless Chromium =="
bash scripts/build-wasm.sh
out=$($bin demo --once --listen 127.0.0.1:0 --www www --pkg dist/tlsproof --timeout 180)
echo "$out"
if echo "$out" | grep -q "the verifier verified" && echo "$out" | grep -q "Alice Example" && ! echo "$out" | grep -q "demo-secret-token"; then
  echo "end-to-end: 1 passed, 0 failed"
else
  echo "end-to-end: 0 passed, 1 failed"; exit 1
fi
