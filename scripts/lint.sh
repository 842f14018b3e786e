#!/usr/bin/env bash
# The formatter and the linter, as npm test runs them: rustfmt (rustfmt.toml) and clippy with
# every warning an error, natively over every target of the workspace (the crate and the
# Node.js addon, node/) and for the browser build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The wasm toolchain's clippy where it has one (rustup's nightly); Debian's rustc-web has none,
# and there rustc's own warnings are denied instead.
if wasm_env cargo clippy --version >/dev/null 2>&1; then
  wasm_env cargo clippy --target wasm32-unknown-unknown --lib --features bench-exports --quiet -- -D warnings
else
  echo "[lint] the wasm toolchain has no clippy: rustc's warnings only"
  wasm_env cargo rustc --target wasm32-unknown-unknown --lib --features bench-exports --quiet -- -D warnings
fi
echo "[lint] rustfmt and clippy: clean"
