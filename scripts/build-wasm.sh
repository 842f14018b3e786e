#!/usr/bin/env bash
# Builds the browser package: wasm-pack --target web (release, LTO) into pkg/, then the npm
# package dist/tlsproof/ (scripts/build-package.sh: wrapper, wasm-opt, sizes).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
wasm_env CARGO_PROFILE_RELEASE_LTO=thin wasm-pack --log-level warn build --target web --release --out-dir pkg --out-name tlsproof .
bash scripts/build-package.sh
