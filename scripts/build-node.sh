#!/usr/bin/env bash
# Builds the Node.js prover (node/, a napi-rs addon) with @napi-rs/cli into the package,
# dist/tlsproof/native/tlsproof.<platform>-<arch>[-<abi>].node, the file js/node.js loads.
#
#   scripts/build-node.sh                    # this machine's platform (linux-x64-gnu here)
#   scripts/build-node.sh --target TRIPLE    # another one of js/package.json's napi.targets
#
# Another target needs its Rust target (`rustup target add TRIPLE`) and a linker for it:
# @napi-rs/cli's --use-napi-cross (Linux glibc targets, a downloaded gcc) or --cross-compile
# (cargo-zigbuild / cargo-xwin) supply one, and pass through after the target. Only the host's
# build is tested here (npm test); docs/node.md says how the others are published.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${TLSPROOF_PACKAGE_OUT:-dist/tlsproof}
[ -x node_modules/.bin/napi ] || npm ci --no-audit --no-fund --loglevel=error
built=$(mktemp -d)
trap 'rm -rf "$built"' EXIT
node_modules/.bin/napi build --platform --release --package-json-path js/package.json \
  --manifest-path node/Cargo.toml --output-dir "$built" --no-js "$@"
mkdir -p "$out/native"
cp "$built"/tlsproof.*.node "$out/native/"
echo "[node] $(cd "$built" && ls tlsproof.*.node) in $out/native/"
