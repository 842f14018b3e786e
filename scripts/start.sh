#!/usr/bin/env bash
# The main job: build everything, start the fixture, the proxy and the demo page, drive
# headless Chromium through the page once and print what it got; then keep serving the page
# until Ctrl-C (pass --once to exit after the headless run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
bash scripts/build-wasm.sh
cargo build --release --bin tlsproof
exec "${CARGO_TARGET_DIR:-target}/release/tlsproof" demo --www www --pkg dist/tlsproof "$@"
