#!/usr/bin/env bash
# Builds the browser package: wasm-pack --target web (release, LTO) into pkg/, then the npm
# package dist/tlsproof/ (scripts/build-package.sh: wrapper, wasm-opt, sizes).
# With --bench: the same package plus the engine benchmarks' entry points (benchZk, benchMpc)
# in pkg-bench/ and dist/tlsproof-bench/, for `tlsproof bench zk|mpc --target browser`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
pkg=pkg out=dist/tlsproof features=()
if [ "${1:-}" = --bench ]; then pkg=pkg-bench out=dist/tlsproof-bench features=(--features bench-exports); fi
wasm_env CARGO_PROFILE_RELEASE_LTO=thin wasm-pack --log-level warn build --target web --release --out-dir "$pkg" --out-name tlsproof . "${features[@]}"
TLSPROOF_PKG="$pkg" TLSPROOF_PACKAGE_OUT="$out" bash scripts/build-package.sh
