#!/usr/bin/env bash
# Installs everything the build and the tests need, on a fresh machine or an equipped one
# (idempotent; a few seconds when all is present). Writes .tlsproof/toolchain.env, which
# scripts/env.sh sources.
#
# Threaded wasm needs std rebuilt with atomics (-Z build-std), so a compiler with the std
# sources: rustup's nightly + rust-src where rustup can download it, otherwise Debian's
# rustc-web/cargo-web/rust-web-src with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tlsproof
log() { echo "[setup] $*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
apt_updated=0
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ $apt_updated = 0 ]; then log "apt-get update"; $SUDO apt-get update -qq; apt_updated=1; fi
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
}

# C toolchain for ring's wasm build, wasm-opt, Chromium + ChromeDriver, openssl (interop tests),
# a font for the benchmark plots' PNG text.
apt_install clang-22 lld-22 binaryen chromium chromium-driver openssl pkg-config fonts-dejavu-core

# --- Rust toolchain that can -Z build-std for wasm32 ---
toolchain=""
if [ -z "${TLSPROOF_TOOLCHAIN:-}" ] || [ "${TLSPROOF_TOOLCHAIN}" = nightly ]; then
  if command -v rustup >/dev/null 2>&1; then
    if rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
      toolchain=nightly
    elif timeout 300 rustup toolchain install nightly --profile minimal --component rust-src >/dev/null 2>&1 \
        && rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
      toolchain=nightly
    fi
  fi
fi
if [ -z "$toolchain" ]; then
  log "using Debian's rustc-web toolchain"
  apt_install rustc-web cargo-web rust-web-src
  toolchain=debian
fi

if [ "$toolchain" = nightly ]; then
  cat > .tlsproof/toolchain.env <<ENV
export RUSTUP_TOOLCHAIN=nightly
export PATH="\$HOME/.cargo/bin:\$PATH"
ENV
else
  cat > .tlsproof/toolchain.env <<ENV
unset RUSTUP_TOOLCHAIN
export PATH="/usr/bin:\$PATH:\$HOME/.cargo/bin"
export RUSTC_BOOTSTRAP=1
ENV
fi
cat >> .tlsproof/toolchain.env <<'ENV'
export CC_wasm32_unknown_unknown=clang-22
export AR_wasm32_unknown_unknown=llvm-ar-22
# -Z build-std for wasm builds (wasm-pack does not pass extra cargo flags to every build).
export TLSPROOF_WASM_ENV="CARGO_UNSTABLE_BUILD_STD=std,panic_abort"
ENV
# shellcheck disable=SC1091
. .tlsproof/toolchain.env
log "toolchain: $toolchain ($(rustc --version))"

# wasm-pack refuses to run when the sysroot has no wasm32 directory; build-std supplies std.
sysroot_wasm="$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown/lib"
[ -d "$sysroot_wasm" ] || $SUDO mkdir -p "$sysroot_wasm"

# --- wasm-bindgen CLI at exactly the version in Cargo.lock, and wasm-pack ---
[ -f Cargo.lock ] || cargo generate-lockfile
wb_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]; then
  log "cargo install wasm-bindgen-cli $wb_version (a few minutes)"
  cargo install -q --force wasm-bindgen-cli --version "$wb_version"
fi
if ! command -v wasm-pack >/dev/null 2>&1; then
  log "cargo install wasm-pack (a few minutes)"
  cargo install -q wasm-pack
fi

# --- JavaScript dev dependencies (TypeScript, the browser driver) ---
if [ -f package-lock.json ] && [ ! -d node_modules ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "ready"
