# Sourced by the other scripts: the toolchains chosen by setup.sh.
# shellcheck disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/../.tlsproof/toolchain.env"

# Runs a command with the wasm toolchain (threaded wasm: -Z build-std), e.g. `wasm_env wasm-pack
# build …`; like `env`, the command may start with VAR=value assignments.
# Native builds use the host toolchain that toolchain.env put in place.
wasm_env() {
  if [ "$TLSPROOF_WASM_TOOLCHAIN" = nightly ]; then
    env RUSTUP_TOOLCHAIN=nightly CARGO_UNSTABLE_BUILD_STD=std,panic_abort "$@"
  else
    env -u RUSTUP_TOOLCHAIN PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 CARGO_UNSTABLE_BUILD_STD=std,panic_abort "$@"
  fi
}
