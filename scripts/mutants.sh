#!/usr/bin/env bash
# Mutation testing of the verifier's checks with cargo-mutants (not part of CI: it builds and
# tests every mutant, hours on 2 cores). Each missed mutant must get a test or a line in
# scripts/mutants-allow.txt ("<mutant as cargo-mutants names it>  # why no test can catch it");
# the script fails if a missed mutant is not listed.
#   scripts/mutants.sh [--list] [extra cargo-mutants args, e.g. --shard 0/4]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
MUTANTS_VERSION=27.1.0
if [ "$(cargo mutants --version 2>/dev/null | awk '{print $2}')" != "$MUTANTS_VERSION" ]; then
  cargo install -q --locked cargo-mutants --version "=$MUTANTS_VERSION" || cargo install -q cargo-mutants --version "=$MUTANTS_VERSION"
fi
# The files that hold the verifier's checks, QuickSilver's verifier and check, and the OT
# consistency checks.
files=(
  src/protocol/check.rs src/protocol/proof.rs src/protocol/transcript.rs src/protocol/verifier.rs
  src/protocol/target.rs src/protocol/relay_guard.rs src/protocol/exchange.rs src/protocol/reveal.rs
  src/zk/verifier.rs src/zk/check.rs
  src/ot/kos.rs src/ot/softspoken.rs src/ot/ferret/spcot.rs
)
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
if [ "${1:-}" = --list ]; then
  shift
  cargo mutants --list "${args[@]}" "$@"
  exit 0
fi
out=target/mutants
started=$(date +%s)
# Native tests only: the browser suite cannot see a native mutant.
cargo mutants "${args[@]}" --output "$out" --timeout 300 "$@" -- --release || true
echo "[mutants] $(( $(date +%s) - started )) s; outcomes in $out/mutants.out"
missed="$out/mutants.out/missed.txt"
[ -f "$missed" ] || { echo "[mutants] no missed.txt: the run did not finish"; exit 1; }
unlisted=$(grep -vxF -f <(grep -v '^#' scripts/mutants-allow.txt | sed 's/  *#.*//' | grep -v '^$') "$missed" || true)
if [ -n "$unlisted" ]; then
  echo "[mutants] missed and not in scripts/mutants-allow.txt:"; echo "$unlisted"; exit 1
fi
echo "[mutants] every missed mutant is reviewed in scripts/mutants-allow.txt"
