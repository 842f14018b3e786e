#!/usr/bin/env bash
# Assembles the npm package dist/tlsproof/ from wasm-pack's output (pkg/) and the JS wrapper
# (js/), runs binaryen's wasm-opt on the wasm and reports its size before and after.
# `npm pack dist/tlsproof` makes the tarball. TLSPROOF_WASM_OPT=0 skips wasm-opt.
#
# wasm-opt comes from the npm `binaryen` package (a dev dependency): Debian's binaryen 108
# corrupts the export of wasm-bindgen's externref table, which is why wasm-pack's own
# wasm-opt step is off in Cargo.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${TLSPROOF_PKG:-pkg}
out=${TLSPROOF_PACKAGE_OUT:-dist/tlsproof}
[ -f "$pkg/tlsproof_bg.wasm" ] || { echo "[package] $pkg/ is missing: run scripts/build-wasm.sh" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/wasm"
cp "$pkg/tlsproof.d.ts" "$pkg/tlsproof_bg.wasm.d.ts" "$out/wasm/"
# wasm-bindgen-rayon's initThreadPool calls startWorkers() from its JS helper (a snippet), whose
# thread workers import the glue by a computed URL: no bundler can follow that. The package's
# own js/threads.js keeps the helper's contract with static worker URLs, so the glue imports it
# instead and the snippet is not shipped.
helper="import { startWorkers } from './snippets/wasm-bindgen-rayon-[0-9a-f]*/src/workerHelpers.js';"
grep -qx "$helper" "$pkg/tlsproof.js" || { echo "[package] $pkg/tlsproof.js does not import wasm-bindgen-rayon's helper as expected (built with --features standalone-threads?)" >&2; exit 1; }
sed "s|^$helper\$|import { startWorkers } from '../threads.js';|" "$pkg/tlsproof.js" > "$out/wasm/tlsproof.js"
if grep -q "snippets/" "$out/wasm/tlsproof.js"; then echo "[package] the glue imports a snippet the package does not ship" >&2; exit 1; fi
cp js/index.js js/node.js js/direct.js js/worker.js js/thread.js js/threads.js js/errors.js js/internal.js js/index.d.ts js/direct.d.ts js/attestation.d.ts js/README.md "$out/"
# tlsproof/attestation needs secp256k1, Ed25519 and Keccak-256 (noble, a dev dependency):
# bundled into its one file, so the package has no runtime dependencies and the module loads
# unbundled (a page, a worker, Node.js) as well as through bundlers. errors.js stays shared, so
# `instanceof PresentationError` holds across entry points; noble's license comments are kept.
[ -x node_modules/.bin/esbuild ] || npm ci --no-audit --no-fund --loglevel=error
node_modules/.bin/esbuild js/attestation.js --bundle --format=esm --platform=neutral --target=es2022 \
  --external:./errors.js --minify --legal-comments=inline --log-level=warning --outfile="$out/attestation.js"
version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
sed "s/\"version\": \"0.0.0\"/\"version\": \"$version\"/" js/package.json > "$out/package.json"

kib() { echo "$(( $(stat -c %s "$1") / 1024 )) KiB ($(( $(gzip -9c "$1" | wc -c) / 1024 )) KiB gzipped)"; }
echo "[package] wasm as wasm-bindgen left it: $(kib "$pkg/tlsproof_bg.wasm")"
if [ "${TLSPROOF_WASM_OPT:-1}" != 0 ]; then
  [ -x node_modules/.bin/wasm-opt ] || npm ci --no-audit --no-fund --loglevel=error
  # Features as rustc emits them for this target (+atomics,+bulk-memory,+simd128 on top of
  # the defaults); -O2 rather than -O3/-O4: most of the size win for a fraction of the time.
  node_modules/.bin/wasm-opt -O2 \
    --enable-threads --enable-bulk-memory --enable-simd --enable-mutable-globals --enable-sign-ext \
    --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
    "$pkg/tlsproof_bg.wasm" -o "$out/wasm/tlsproof_bg.wasm"
  echo "[package] wasm after wasm-opt -O2:          $(kib "$out/wasm/tlsproof_bg.wasm")"
else
  cp "$pkg/tlsproof_bg.wasm" "$out/wasm/"
fi
echo "[package] $out ($version) ready; npm pack $out makes the tarball"
