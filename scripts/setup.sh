#!/usr/bin/env bash
# Installs everything the build and the tests need, on a fresh machine or an equipped one
# (idempotent; a few seconds when all is present). Writes .tlsproof/toolchain.env, which
# scripts/env.sh sources.
#
# Two Rust toolchains, chosen separately because they need different things:
# - the host toolchain builds native code and installs the host tools (wasm-bindgen-cli, wasm-pack).
#   It should be a released cargo: rustup's stable (or another numbered toolchain), else Debian's
#   cargo. A nightly cargo is the last resort: a newer nightly has failed to resolve the tools'
#   dependencies against the registry while the stable cargo resolved them.
# - the wasm toolchain builds threaded wasm, which needs std rebuilt with atomics (-Z build-std),
#   so a compiler with the std sources: rustup's nightly + rust-src where it is there or can be
#   downloaded, otherwise Debian's rustc-web/cargo-web/rust-web-src with RUSTC_BOOTSTRAP=1. It is
#   used for wasm builds only (scripts/env.sh: `wasm_env`).
#
# Pinned: wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock, wasm-pack at
# WASM_PACK_VERSION; each is installed with its own published lock file (--locked) when the
# registry serves every version in it, else resolved fresh.
#
# Environment:
#   TLSPROOF_TOOL_ROOT       where `cargo install` puts the host tools (default: $CARGO_HOME or ~/.cargo)
#   TLSPROOF_WASM_TOOLCHAIN  nightly | debian: force the wasm toolchain
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tlsproof
log() { echo "[setup] $*" >&2; }

WASM_PACK_VERSION=0.13.1
TOOL_ROOT="${TLSPROOF_TOOL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}"
mkdir -p "$TOOL_ROOT/bin"
TOOL_ROOT="$(cd "$TOOL_ROOT" && pwd)"

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
debian_rust() { apt_install rustc-web cargo-web rust-web-src rust-web-clippy rustfmt-web; }

# C toolchain for ring's wasm build, wasm-opt, Chromium + ChromeDriver, openssl (interop tests),
# a font for the benchmark plots' PNG text.
apt_install clang-22 lld-22 binaryen chromium chromium-driver openssl pkg-config fonts-dejavu-core

have_rustup=0
command -v rustup >/dev/null 2>&1 && have_rustup=1
rustup_toolchains() { [ $have_rustup = 1 ] && rustup toolchain list 2>/dev/null | awk '{print $1}'; }

# --- host toolchain: released rustup toolchains (stable first), then Debian's cargo, then nightly ---
host_candidates=()
if [ $have_rustup = 1 ]; then
  while read -r t; do case "$t" in stable-*) host_candidates+=("$t") ;; esac; done < <(rustup_toolchains)
  while read -r t; do case "$t" in [0-9]*) host_candidates+=("$t") ;; esac; done < <(rustup_toolchains)
fi
host_candidates+=(debian)
if [ $have_rustup = 1 ]; then
  while read -r t; do case "$t" in nightly*|beta*) host_candidates+=("$t") ;; esac; done < <(rustup_toolchains)
fi
# Runs cargo of host toolchain $1 with the rest as arguments.
host_cargo() {
  local t=$1; shift
  if [ "$t" = debian ]; then
    env -u RUSTUP_TOOLCHAIN RUSTC=/usr/bin/rustc /usr/bin/cargo "$@"
  else
    rustup run "$t" cargo "$@"
  fi
}
host_toolchain=""
for t in "${host_candidates[@]}"; do
  if [ "$t" = debian ] && [ $have_rustup = 1 ]; then continue; fi   # only as an installer fallback
  host_toolchain=$t; break
done
if [ "$host_toolchain" = debian ]; then debian_rust; fi
# The formatter and the linter npm test runs (scripts/lint.sh); a no-op where they are there.
if [ $have_rustup = 1 ] && [ "$host_toolchain" != debian ]; then
  for c in rustfmt clippy; do
    rustup component list --installed --toolchain "$host_toolchain" 2>/dev/null | grep -q "^$c" \
      || timeout 300 rustup component add "$c" --toolchain "$host_toolchain" >/dev/null
  done
fi

# Installs crate $1 at version $2 (binary $3) into $TOOL_ROOT, trying each host toolchain in
# turn, each first with the crate's own lock file and then without.
install_tool() {
  local crate=$1 version=$2 bin=$3 t locked out
  out=$(mktemp)
  for t in "${host_candidates[@]}"; do
    if [ "$t" = debian ]; then debian_rust; fi
    for locked in --locked ""; do
      log "cargo install $crate $version ${locked:+(locked) }with the $t toolchain (a few minutes)"
      if host_cargo "$t" install -q --force $locked --root "$TOOL_ROOT" --version "=$version" "$crate" >"$out" 2>&1; then
        rm -f "$out"; return 0
      fi
      log "  failed: $(grep -m1 -E '^error' "$out" || tail -1 "$out")"
    done
  done
  cat "$out" >&2; rm -f "$out"
  log "could not install $crate $version ($bin) with any toolchain: ${host_candidates[*]}"
  exit 1
}
tool_version() { "$TOOL_ROOT/bin/$1" --version 2>/dev/null | awk '{print $2}'; }

# --- wasm toolchain ---
wasm_toolchain="${TLSPROOF_WASM_TOOLCHAIN:-}"
has_nightly_src() { rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; }
if [ -z "$wasm_toolchain" ] && [ $have_rustup = 1 ]; then
  if has_nightly_src; then
    wasm_toolchain=nightly
  elif rustup_toolchains | grep -q '^nightly'; then
    # Add rust-src to the nightly that is there; never update that toolchain.
    timeout 300 rustup component add rust-src --toolchain nightly >/dev/null 2>&1 && has_nightly_src && wasm_toolchain=nightly
  elif timeout 300 rustup toolchain install nightly --profile minimal --component rust-src --component clippy >/dev/null 2>&1 \
      && has_nightly_src; then
    wasm_toolchain=nightly
  fi
fi
[ -n "$wasm_toolchain" ] || wasm_toolchain=debian
# scripts/lint.sh runs the wasm toolchain's clippy (it falls back to rustc's warnings without).
if [ "$wasm_toolchain" = nightly ] && ! rustup component list --installed --toolchain nightly 2>/dev/null | grep -q '^clippy'; then
  timeout 300 rustup component add clippy --toolchain nightly >/dev/null 2>&1 || log "no clippy for nightly: the wasm lint checks rustc's warnings only"
fi
[ "$wasm_toolchain" = debian ] && debian_rust

{
  echo "# Written by scripts/setup.sh."
  # rustup's proxies, for a shell whose PATH lacks them
  if [ $have_rustup = 1 ]; then echo "export PATH=\"$(dirname "$(command -v rustup)"):\$PATH\""; fi
  echo "export PATH=\"$TOOL_ROOT/bin:\$PATH\""
  if [ "$host_toolchain" = debian ]; then
    echo "unset RUSTUP_TOOLCHAIN"
    echo "export PATH=\"/usr/bin:\$PATH\""
  else
    echo "export RUSTUP_TOOLCHAIN=$host_toolchain"
  fi
  echo "export TLSPROOF_HOST_TOOLCHAIN=$host_toolchain"
  echo "export TLSPROOF_WASM_TOOLCHAIN=$wasm_toolchain"
  echo "export CC_wasm32_unknown_unknown=clang-22"
  echo "export AR_wasm32_unknown_unknown=llvm-ar-22"
} > .tlsproof/toolchain.env
# shellcheck disable=SC1091
. scripts/env.sh
log "host toolchain: $host_toolchain ($(rustc --version)); wasm toolchain: $wasm_toolchain ($(wasm_env rustc --version))"

# wasm-pack refuses to run when the sysroot has no wasm32 directory; build-std supplies std.
sysroot_wasm="$(wasm_env rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown/lib"
[ -d "$sysroot_wasm" ] || $SUDO mkdir -p "$sysroot_wasm"

# --- host tools, at pinned versions ---
[ -f Cargo.lock ] || cargo generate-lockfile
wb_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
[ "$(tool_version wasm-bindgen)" = "$wb_version" ] || install_tool wasm-bindgen-cli "$wb_version" wasm-bindgen
[ "$(tool_version wasm-pack)" = "$WASM_PACK_VERSION" ] || install_tool wasm-pack "$WASM_PACK_VERSION" wasm-pack
log "wasm-bindgen $(tool_version wasm-bindgen), wasm-pack $(tool_version wasm-pack) in $TOOL_ROOT/bin"

# --- nginx for the load-balanced deployment test: Debian's package, its binary only, unpacked
# into $TOOL_ROOT (installing the package would install and start a system service) ---
if ! command -v nginx >/dev/null 2>&1 && [ ! -x "$TOOL_ROOT/nginx/usr/sbin/nginx" ]; then
  apt_install libcrypt1 libpcre2-8-0 libssl3 zlib1g
  deb_dir=$(mktemp -d)
  if ! (cd "$deb_dir" && apt-get download -qq nginx >/dev/null 2>&1); then
    [ $apt_updated = 1 ] || { log "apt-get update"; $SUDO apt-get update -qq; apt_updated=1; }
    (cd "$deb_dir" && apt-get download -qq nginx)
  fi
  dpkg-deb -x "$deb_dir"/nginx_*.deb "$TOOL_ROOT/nginx"
  rm -rf "$deb_dir"
fi
if ! command -v nginx >/dev/null 2>&1; then ln -sf "$TOOL_ROOT/nginx/usr/sbin/nginx" "$TOOL_ROOT/bin/nginx"; fi
log "$(nginx -v 2>&1 || "$TOOL_ROOT/bin/nginx" -v 2>&1)"

# --- JavaScript dev dependencies (TypeScript, wasm-opt for the package; noble, solc and
# ethereumjs for the attestation tests) ---
# (again when the lock file changed since: npm writes node_modules/.package-lock.json)
if [ -f package-lock.json ] && { [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "ready"
