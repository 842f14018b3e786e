#!/usr/bin/env bash
# Proves that scripts/setup.sh works on a machine that has none of the host tools: a copy of the
# working tree, an empty cargo home (so a fresh registry index) and an empty tool root, a PATH
# from which every wasm-bindgen and wasm-pack is removed; then setup, then one wasm build (fresh
# target dir) with the tools it installed. Not part of CI: it takes several minutes.
#   scripts/check-fresh-setup.sh [--no-rustup] [--keep]
#     --no-rustup  also hide rustup, as on a machine with Debian's rustc-web only
#     --keep       keep the temporary root (printed) instead of removing it
set -euo pipefail
cd "$(dirname "$0")/.."
no_rustup=0 keep=0
for a in "$@"; do
  case "$a" in
    --no-rustup) no_rustup=1 ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--no-rustup] [--keep]" >&2; exit 2 ;;
  esac
done
log() { echo "[fresh] $*" >&2; }

root=$(mktemp -d /tmp/tlsproof-fresh.XXXXXX)
[ $keep = 1 ] || trap 'rm -rf "$root"' EXIT
mkdir -p "$root/src" "$root/cargo-home" "$root/tools" "$root/rustup-bin"

# rustup's proxies dispatch on their own name, so links to the rustup binary stand in for the
# rustup bin directory without the tools installed there.
rustup_bin=""
if [ $no_rustup = 0 ] && command -v rustup >/dev/null 2>&1; then
  rustup_bin=$(command -v rustup)
  for p in rustup cargo rustc rustdoc; do ln -s "$rustup_bin" "$root/rustup-bin/$p"; done
fi
path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -n "$d" ] || continue
  if [ -e "$d/wasm-bindgen" ] || [ -e "$d/wasm-pack" ] || [ -e "$d/rustup" ] || [ -e "$d/nginx" ]; then continue; fi
  path="${path:+$path:}$d"
done
export PATH="$root/rustup-bin:$path"
export CARGO_HOME="$root/cargo-home" TLSPROOF_TOOL_ROOT="$root/tools" CARGO_TARGET_DIR="$root/target"
unset RUSTUP_TOOLCHAIN
for t in wasm-bindgen wasm-pack nginx; do
  if command -v "$t" >/dev/null 2>&1; then log "PATH still has $t: $(command -v "$t")"; exit 1; fi
done
log "root $root; PATH has no wasm-bindgen, no wasm-pack, no nginx${rustup_bin:+; rustup: $rustup_bin}"

git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$root/src" -xf -
cd "$root/src"

t0=$(date +%s)
bash scripts/setup.sh
t1=$(date +%s)
bash scripts/build-wasm.sh
t2=$(date +%s)
. scripts/env.sh
log "setup: $((t1 - t0)) s; wasm build: $((t2 - t1)) s"
log "tools: $(command -v wasm-bindgen) ($(wasm-bindgen --version)), $(command -v wasm-pack) ($(wasm-pack --version))"
log "nginx: $(command -v nginx) ($(nginx -v 2>&1))"
log "toolchains: host $TLSPROOF_HOST_TOOLCHAIN, wasm $TLSPROOF_WASM_TOOLCHAIN"
ls -l dist/tlsproof/wasm/tlsproof_bg.wasm >&2
log "passed"
