#!/usr/bin/env bash
# Two verifiers behind nginx (deploy/nginx/tlsproof.conf, Debian's nginx): 40 provers through
# it, one verifier sent SIGTERM while they run. Every prover must be verified, its attestation
# under the one signing key the verifiers share, both verifiers must have served some, the one
# stopped must drain and exit 0, and the other's /metrics must count what it served.
# Usage: scripts/test-nginx.sh TLSPROOF_BIN FIXTURE(host:port) CA_PEM WORK_DIR
set -euo pipefail
bin=$1 fixture=$2 ca=$3 dir=$4
nginx=$(command -v nginx || true)
[ -n "$nginx" ] || { echo "nginx: not found (scripts/setup.sh installs Debian's)"; exit 1; }
mkdir -p "$dir/nginx/logs" "$dir/nginx/tmp"
# GET a URL's body (node's fetch: curl may not be installed)
http_get() { node -e 'fetch(process.argv[1]).then(async (r) => { if (!r.ok) process.exit(1); process.stdout.write(await r.text()); }).catch(() => process.exit(1))' "$1"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

key=$($bin keygen --scheme secp256k1 --out "$dir/shared-key.pem" | sed -n 's/^public key: //p')
for v in a b; do
  $bin verifier --listen 127.0.0.1:0 --allow "$fixture" --roots "$ca" --signing-key "$dir/shared-key.pem" \
    --trusted-proxy 127.0.0.1 --max-per-ip 64 --addr-file "$dir/verifier-$v" --log-format json \
    --verdict-dir "$dir/verdicts-$v" >"$dir/verifier-$v.log" 2>&1 &
  pids+=($!); eval "pid_$v=$!"
done
for v in a b; do for _ in $(seq 100); do [ -s "$dir/verifier-$v" ] && break; sleep 0.1; done; done

# The shipped configuration with this run's ports, paths and a pid file; nginx runs in front.
port=$((20000 + RANDOM % 20000))
sed -e "s/server 127.0.0.1:7047 /server $(cat "$dir/verifier-a") /" \
    -e "s/server 127.0.0.1:7048 /server $(cat "$dir/verifier-b") /" \
    -e "s/listen 80;/listen 127.0.0.1:$port;/" deploy/nginx/tlsproof.conf >"$dir/nginx/tlsproof.conf"
cat >"$dir/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log $dir/nginx/logs/access.log;
  client_body_temp_path $dir/nginx/tmp/body;
  proxy_temp_path $dir/nginx/tmp/proxy;
  fastcgi_temp_path $dir/nginx/tmp/fastcgi;
  uwsgi_temp_path $dir/nginx/tmp/uwsgi;
  scgi_temp_path $dir/nginx/tmp/scgi;
  include $dir/nginx/tlsproof.conf;
}
CONF
"$nginx" -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/logs/error.log" -g "daemon off;" &
pids+=($!)
for _ in $(seq 50); do http_get "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

# 40 provers through nginx (the fast path and a revealed body in turn): 20 at once, then verifier
# a is stopped while theirs run, then 20 more, which nginx must send to b.
n=40
prove() {
  local reveal=(); [ $(($1 % 2)) = 0 ] && reveal=(--reveal-recv body)
  $bin prove --verifier "ws://127.0.0.1:$port/" --url "https://$fixture/bytes?n=4096" --roots "$ca" \
    --header "Authorization: Bearer nginx-secret-$(printf %02d "$1")" --redact-header authorization "${reveal[@]}" \
    --verifier-key "$key" --attestation-out "$dir/attestation-$1.json" >"$dir/prover-$1.out" 2>&1
}
for i in $(seq 20); do prove "$i" & eval "prover_$i=$!"; done
for _ in $(seq 100); do
  running=$(http_get "http://$(cat "$dir/verifier-a")/metrics" | sed -n 's/^tlsproof_sessions_running //p')
  [ "${running:-0}" -gt 0 ] && break; sleep 0.05
done
kill -TERM "$pid_a"
sleep 0.2
for i in $(seq 21 $n); do prove "$i" & eval "prover_$i=$!"; done
failed=0
for i in $(seq $n); do eval "wait \$prover_$i" || { failed=$((failed + 1)); echo "prover $i:"; tail -3 "$dir/prover-$i.out"; }; done
a_exit=0; wait "$pid_a" || a_exit=$?

# a prover may end before its verifier has logged the session: give the logs a moment
for _ in $(seq 50); do
  served_a=$(grep -c '"event":"verified"' "$dir/verifier-a.log" || true)
  served_b=$(grep -c '"event":"verified"' "$dir/verifier-b.log" || true)
  [ $((served_a + served_b)) -ge $n ] && break; sleep 0.1
done
metrics_b=$(http_get "http://$(cat "$dir/verifier-b")/metrics" | sed -n 's/^tlsproof_sessions_total{outcome="verified",mode="proxy"} //p')
echo "nginx: $((n - failed)) of $n provers verified; verifier a served $served_a (then drained, exit $a_exit), b $served_b (/metrics: ${metrics_b:-0})"
[ "$failed" = 0 ] || { echo "nginx: $failed provers failed"; exit 1; }
[ "$a_exit" = 0 ] || { echo "nginx: the drained verifier exited $a_exit"; cat "$dir/verifier-a.log"; exit 1; }
grep -q '"event":"draining"' "$dir/verifier-a.log" || { echo "nginx: verifier a did not drain"; exit 1; }
[ "$served_a" -gt 0 ] && [ "$served_b" -ge 20 ] || { echo "nginx: verifier a served $served_a, b $served_b (b must have served the 20 sent after a's stop)"; exit 1; }
[ $((served_a + served_b)) = $n ] || { echo "nginx: the verifiers verified $((served_a + served_b)) sessions, not $n"; exit 1; }
[ "${metrics_b%.*}" = "$served_b" ] || { echo "nginx: verifier b's /metrics counts ${metrics_b:-0} verified, its log $served_b"; exit 1; }
# The verdict does not depend on which verifier served: each prover's printed verdict, but for
# its times, its sizes on the wire and its attestation's file, is one of two (the fast path, or
# the body revealed).
verdicts=$(for i in $(seq $n); do
  sed -n '/=== the verifier verified/,$p' "$dir/prover-$i.out" | sed 's/, connected at .*//' |
    grep -vE "^=== the verifier verified|^timings:|^attestation signed by $key written to" | md5sum
done | sort -u | wc -l)
[ "$verdicts" = 2 ] || { echo "nginx: $verdicts different verdicts, not 2"; for i in 1 2; do cut -c1-200 "$dir/prover-$i.out"; done; exit 1; }
if grep -q "nginx-secret" "$dir/verifier-a.log" "$dir/verifier-b.log"; then echo "nginx: a verifier logged a secret"; exit 1; fi
# The logs are one JSON object per line; the verdicts, with their revealed bytes, are in the
# verdict directories only, one file each, none of them holding a hidden token.
node -e 'for (const f of process.argv.slice(1)) for (const l of require("fs").readFileSync(f, "utf8").split("\n").filter(Boolean)) JSON.parse(l)' \
  "$dir/verifier-a.log" "$dir/verifier-b.log" || { echo "nginx: a log line is not JSON"; exit 1; }
if grep -q "abcdefghij" "$dir/verifier-a.log" "$dir/verifier-b.log"; then echo "nginx: a verifier logged response bytes"; exit 1; fi
files=$(find "$dir/verdicts-a" "$dir/verdicts-b" -name 'verdict-*.json' | wc -l)
[ "$files" = $n ] || { echo "nginx: $files verdict files, not $n"; exit 1; }
if grep -lq "nginx-secret" "$dir"/verdicts-*/*.json; then echo "nginx: a verdict file holds a hidden token"; exit 1; fi
echo "nginx deployment: 1 passed, 0 failed"
