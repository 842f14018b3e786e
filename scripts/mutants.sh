#!/usr/bin/env bash
# Mutation testing of the verifier's checks with cargo-mutants (not part of CI: about 40 s a
# mutant on 2 cores, so the whole list takes hours; run it by files or shards). Each missed
# mutant must get a test or a line in scripts/mutants-allow.txt ("<mutant as cargo-mutants
# names it>  # why no test can catch it"); the script fails if a missed mutant is not listed,
# or if a listed one no longer exists.
#   scripts/mutants.sh [--list] [extra cargo-mutants args, e.g. --shard 0/4]
#   MUTANTS_FILES="src/protocol/disclose/reveal.rs src/zk/check.rs" MUTANTS_OUT=/tmp/m scripts/mutants.sh
#   MUTANTS_TESTS=--lib scripts/mutants.sh   (first pass on the library's tests only)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null | awk '{print $2}')" != "$MUTANTS_VERSION" ]; then
  cargo install -q --locked cargo-mutants --version "=$MUTANTS_VERSION" || cargo install -q cargo-mutants --version "=$MUTANTS_VERSION"
fi
# The files that hold the verifier's checks (TLS 1.2 and 1.3, the session multiplexer's
# limits, the verdict's text), the MPC-mode verifier's path (its copy of the client, the
# garbled phases it evaluates, the proof of the garbling), QuickSilver's verifier and check
# and the byte gadgets the proofs assert with, and the OT consistency checks (KOS's and
# SoftSpokenOT's shared check is in ot/bits.rs, Ferret's in its SPCOT).
files=(
  src/protocol/prove/tls12/check.rs src/protocol/prove/tls12/mod.rs src/protocol/verifier.rs
  src/protocol/observe/tls12/mod.rs src/protocol/observe/tls12/error.rs
  src/protocol/observe/tls12/records.rs src/protocol/observe/tls12/handshake.rs
  src/protocol/prove/tls13/check.rs src/protocol/prove/tls13/mod.rs src/protocol/prove/tls13/derivation.rs
  src/protocol/prove/tls13/records.rs src/protocol/observe/tls13.rs
  src/protocol/target.rs src/protocol/observe/relay_guard.rs src/protocol/disclose/exchange.rs src/protocol/disclose/reveal.rs
  src/wire/mux.rs src/protocol/disclose/output.rs
  src/mpc/connection/mod.rs src/mpc/connection/forward.rs src/mpc/connection/prover.rs
  src/mpc/connection/verifier.rs src/mpc/connection/seal.rs src/mpc/connection/ahead.rs
  src/mpc/record.rs src/mpc/garbled.rs src/mpc/phases.rs src/mpc/reproof.rs
  src/tls/client/mod.rs src/tls/client/handshake.rs src/tls/client/sealed.rs src/tls/client/state.rs
  src/zk/verifier.rs src/zk/check.rs src/zk/bytes.rs
  src/ot/bits.rs src/ot/kos.rs src/ot/softspoken.rs src/ot/ferret/spcot.rs
)
if [ -n "${MUTANTS_FILES:-}" ]; then read -ra files <<<"$MUTANTS_FILES"; fi
# Test helpers inside the files (their `tests` modules are cfg(all(test, …)), which cargo-mutants
# does not recognise as test code) are not mutated.
# SoftSpokenOT's small-field VOLE (the GGM trees and the fold) is the extension, not its check:
# its known-answer and correlation tests cover it.
args=(--exclude-re 'tests::' --exclude-re '(in|replace) (ggm_expand|ggm_puncture|fold_block|reindex_by_y|leaf_prgs|split_blocks|block_sizes)\b')
for f in "${files[@]}"; do args+=(--file "$f"); done
if [ "${1:-}" = --list ]; then
  shift
  cargo mutants --list "${args[@]}" "$@"
  exit 0
fi
# An allow-list line must name a mutant the code still has (line numbers move with edits).
allowed=$(grep -v '^#' scripts/mutants-allow.txt | sed 's/  *#.*//' | grep -v '^$' || true)
stale=$(for f in "${files[@]}"; do grep -F "$f:" <<<"$allowed" || true; done | grep -vxF -f <(cargo mutants --list "${args[@]}") || true)
if [ -n "$stale" ]; then
  echo "[mutants] scripts/mutants-allow.txt names mutants the code no longer has:"; echo "$stale"; exit 1
fi
out=${MUTANTS_OUT:-target/mutants}
started=$(date +%s)
# Native tests only (the browser suite cannot see a native mutant), and only the targets that
# exercise these files. The dev profile without debug info, and the crate itself unoptimised,
# builds incrementally in its own target directory outside the scratch copies: a mutant
# rebuilds in about 5 s (37 s with the crate at opt-level 1, minutes in release) and its tests
# still run on optimised dependencies, in about 40 s for the library's instead of 10 s; nextest
# stops at the first failing test, so caught mutants mostly take less. Unoptimised futures are
# larger, hence the bigger thread stacks. A fixed test timeout (MUTANTS_TIMEOUT, default 120 s),
# well above the library suite's 40 s: the automatic one scales with the baseline, which
# another build on the machine can stretch; with every test target, give it more.
# Build nothing else in that directory while a run goes: cargo's fingerprint of the crate does
# not depend on its path, so a build of the checkout there is taken for the mutant's (and the
# reverse), and the mutants tested meanwhile are not.
# The lying-witness sweep lies at 4 commitments of each site instead of 48 (a session is
# about 10 times slower unoptimised); the sites themselves are all still lied at.
# A test that runs past 90 s is stopped and counts as failed (.config/nextest.toml): a mutant
# that hangs a test is caught by name, not left to MUTANTS_TIMEOUT.
export CARGO_TARGET_DIR="$PWD/target/mutants-build" CARGO_PROFILE_DEV_DEBUG=false \
  CARGO_PROFILE_DEV_OPT_LEVEL=0 RUST_MIN_STACK=67108864 TLSPROOF_LIE_PER_SITE=4 NEXTEST_PROFILE=mutants
# MUTANTS_TESTS narrows the test targets for a quick first pass (e.g. "--lib", which halves
# the build); its missed mutants are then run again with all of them (--re or --file).
read -ra tests <<<"${MUTANTS_TESTS:---lib --test=protocol_soundness --test=notarize --test=notarize_tls13 --test=mpc_notarize --test=zk_kos --test=zk_softspoken --test=proxy}"
targets=()
for t in "${tests[@]}"; do
  targets+=(--cargo-arg="$t")
done
# MUTANTS_FILTER, a nextest filterset, narrows the tests too: nextest runs them in name order
# and mpc:: (the garbled-circuit engine, the heaviest) comes before protocol::, so a first pass
# with MUTANTS_FILTER='not test(/^mpc::/)' takes half the time; its missed mutants are then
# run again without it.
if [ -n "${MUTANTS_FILTER:-}" ]; then targets+=(--cargo-test-arg=-E --cargo-test-arg="$MUTANTS_FILTER"); fi
status=0
cargo mutants "${args[@]}" "${targets[@]}" --output "$out" --test-tool nextest \
  --timeout "${MUTANTS_TIMEOUT:-120}" "$@" || status=$?
echo "[mutants] $(( $(date +%s) - started )) s; outcomes in $out/mutants.out"
# cargo-mutants exits 2 when mutants were missed and 3 on timeouts (both reviewed below); any
# other failure (4: the unmutated tree does not build or pass) means nothing was tested.
if [ "$status" != 0 ] && [ "$status" != 2 ] && [ "$status" != 3 ]; then
  echo "[mutants] cargo-mutants failed (exit $status): no outcome to review"; exit 1
fi
missed="$out/mutants.out/missed.txt"
[ -f "$missed" ] || { echo "[mutants] no missed.txt: the run did not finish"; exit 1; }
unlisted=$(grep -vxF -f <(echo "${allowed:-#none}") "$missed" || true)
if [ -n "$unlisted" ]; then
  echo "[mutants] missed and not in scripts/mutants-allow.txt:"; echo "$unlisted"; exit 1
fi
echo "[mutants] every missed mutant is reviewed in scripts/mutants-allow.txt"
