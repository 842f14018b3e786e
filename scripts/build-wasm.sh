#!/usr/bin/env bash
# Builds the browser package (wasm-pack --target web, release, wasm-opt) into pkg/ and reports its size.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
# shellcheck disable=SC2086
env $TLSPROOF_WASM_ENV CARGO_PROFILE_RELEASE_LTO=thin wasm-pack --log-level warn build --target web --release --out-dir pkg --out-name tlsproof .
size=$(stat -c %s pkg/tlsproof_bg.wasm)
gz=$(gzip -9c pkg/tlsproof_bg.wasm | wc -c)
echo "[build] pkg/tlsproof_bg.wasm: $((size / 1024)) KiB ($((gz / 1024)) KiB gzipped)"
