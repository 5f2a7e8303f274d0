#!/usr/bin/env bash
# Load test of `sluice serve` against a real peer, the Cerbos PDP, on the same calls.
#
#   SLUICE_BIN=target/release/sluice DURATION=10s tests/serve/load.sh
#
# Installs what it lacks: wrk (Debian's package, with apt-get) and the Cerbos PDP (the npm
# registry's package @cerbos/cerbos-linux-x64, into ~/.cache/sluice-peers/cerbos, reused when it
# is there). Builds Sluice only when SLUICE_BIN is unset (cargo build --release --bin sluice).
# Starts `sluice serve` with the configuration `sluice init` writes, and Cerbos with
# tests/serve/cerbos/, both on loopback; checks that both answer every call of
# compiler/benches/corpus.jsonl and refuse the dangerous ones (tests/serve/load_check.py); then
# drives each with wrk (keep-alive, tests/serve/load.lua cycling through the corpus):
#   sluice POST /v1/decide at 1, 16 and 256 connections, POST /v1/decide/batch (32 calls) at 16;
#   cerbos POST /api/check/resources with one resource at 1, 16, 256, and 32 resources at 16.
# Prints a Markdown table and exits 1 if any request failed or was answered with a non-2xx status.
#
# Environment: DURATION (10s), WARMUP (2s, per server, not measured), CORPUS, SLUICE_BIN,
# SLUICE_PEERS (~/.cache/sluice-peers), RESULTS (a file to copy the raw WRK_RESULT lines to).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CORPUS=${CORPUS:-$root/compiler/benches/corpus.jsonl}
PEERS=${SLUICE_PEERS:-$HOME/.cache/sluice-peers}
CERBOS_VERSION=0.55.0
CERBOS_DIR=$PEERS/cerbos
CERBOS_BIN=$CERBOS_DIR/node_modules/@cerbos/cerbos-linux-x64/cerbos-linux-x64
BATCH=32

say() { printf 'load.sh: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# ---------------------------------------------------------------- tools
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v wrk >/dev/null; then
  say "installing wrk (Debian package)"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq wrk >/dev/null
fi
if [ ! -x "$CERBOS_BIN" ] || [ "$("$CERBOS_BIN" --version 2>/dev/null | head -1)" != "$CERBOS_VERSION" ]; then
  say "installing the Cerbos PDP $CERBOS_VERSION from the npm registry into $CERBOS_DIR"
  mkdir -p "$CERBOS_DIR"
  npm install --prefix "$CERBOS_DIR" --no-audit --no-fund --loglevel=error \
    "@cerbos/cerbos-linux-x64@$CERBOS_VERSION" >/dev/null
  [ -x "$CERBOS_BIN" ] || die "no Cerbos binary at $CERBOS_BIN after npm install"
fi
if [ -z "${SLUICE_BIN:-}" ]; then
  say "SLUICE_BIN is unset: building target/release/sluice"
  (cd "$root" && cargo build --release --bin sluice)
  SLUICE_BIN=$root/target/release/sluice
fi
[ -x "$SLUICE_BIN" ] || die "SLUICE_BIN=$SLUICE_BIN is not an executable"
SLUICE_BIN=$(cd "$(dirname "$SLUICE_BIN")" && pwd)/$(basename "$SLUICE_BIN")
[ -f "$CORPUS" ] || die "no corpus at $CORPUS"

# ---------------------------------------------------------------- servers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-load.XXXXXX")
sluice_pid=
cerbos_pid=
cleanup() {
  local rc=$?
  for pid in $sluice_pid $cerbos_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $sluice_pid $cerbos_pid; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

wait_for() { # URL PATTERN WHAT PID
  local i
  for i in $(seq 1 100); do
    kill -0 "$4" 2>/dev/null || die "$3 exited before it was ready"
    if curl -sf --max-time 2 "$1" 2>/dev/null | grep -q "$2"; then return 0; fi
    sleep 0.1
  done
  die "$3 was not ready at $1 after 10 s"
}

mkdir -p "$tmp/sluice"
(cd "$tmp/sluice" && "$SLUICE_BIN" init >/dev/null)
"$SLUICE_BIN" serve --config "$tmp/sluice/sluice.toml" --listen 127.0.0.1:0 2>"$tmp/sluice.log" &
sluice_pid=$!
for i in $(seq 1 100); do
  grep -q 'listening on' "$tmp/sluice.log" && break
  kill -0 "$sluice_pid" 2>/dev/null || { cat "$tmp/sluice.log" >&2; die "sluice serve exited"; }
  sleep 0.1
done
sluice_url=$(grep -o 'listening on http://[0-9.:]*' "$tmp/sluice.log" | head -1 | sed 's/listening on //')
[ -n "$sluice_url" ] || die "sluice serve did not say where it listens"
wait_for "$sluice_url/readyz" '"status":"ready"' "sluice serve" "$sluice_pid"
say "sluice serve ready at $sluice_url ($("$SLUICE_BIN" --version))"

cerbos_http=$(free_port)
cerbos_grpc=$(free_port)
while [ "$cerbos_grpc" = "$cerbos_http" ]; do cerbos_grpc=$(free_port); done
CERBOS_NO_TELEMETRY=1 "$CERBOS_BIN" server --config="$here/cerbos/config.yaml" \
  --set=storage.disk.directory="$here/cerbos/policies" \
  --set=server.httpListenAddr="127.0.0.1:$cerbos_http" \
  --set=server.grpcListenAddr="127.0.0.1:$cerbos_grpc" \
  --log-level=error >"$tmp/cerbos.log" 2>&1 &
cerbos_pid=$!
cerbos_url=http://127.0.0.1:$cerbos_http
wait_for "$cerbos_url/_cerbos/health" SERVING "cerbos" "$cerbos_pid"
say "cerbos $CERBOS_VERSION ready at $cerbos_url"

# ---------------------------------------------------------------- bodies and the answers' check
python3 "$here/load_bodies.py" "$CORPUS" "$tmp/bodies" --batch "$BATCH" 2>/dev/null
check_line=$(python3 "$here/load_check.py" "$CORPUS" "$sluice_url" "$cerbos_url" "$tmp/disagree.txt") \
  || die "the answers' check failed: ${check_line:-}"
say "$check_line"
if [ -s "$tmp/disagree.txt" ]; then
  say "where they disagree:"; sed 's/^/  /' "$tmp/disagree.txt" >&2
fi

# ---------------------------------------------------------------- load
results=$tmp/results.jsonl
failed=0
run() { # TARGET ENDPOINT URL BODIES CONNECTIONS PER_REQUEST [DURATION]
  local target=$1 endpoint=$2 url=$3 bodies=$4 conns=$5 per=$6 dur=${7:-$DURATION}
  local threads=2 line
  [ "$conns" -lt 2 ] && threads=1 # wrk needs at least a connection a thread
  line=$(wrk -t"$threads" -c"$conns" -d"$dur" --timeout 10s -s "$here/load.lua" "$url" \
    -- "$bodies" "$target $endpoint c$conns" "$per" | grep '^WRK_RESULT ' | sed 's/^WRK_RESULT //') \
    || die "wrk failed on $target $endpoint at $conns connections"
  [ -n "$line" ] || die "wrk printed no result for $target $endpoint at $conns connections"
  [ "$dur" = "$DURATION" ] || return 0 # a warm-up
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(target=sys.argv[2], endpoint=sys.argv[3], connections=int(sys.argv[4]), per_request=int(sys.argv[5])); print(json.dumps(r))' \
    "$line" "$target" "$endpoint" "$conns" "$per" >>"$results"
  if ! python3 -c 'import json,sys; r=json.loads(sys.argv[1]); e=r["errors"]; sys.exit(0 if r["non2xx"]==0 and not any(e.values()) and r["requests"]>0 else 1)' "$line"; then
    say "FAILED: $target $endpoint at $conns connections: $line"
    failed=1
  fi
  say "$target $endpoint c$conns: $line"
}

say "load: $DURATION a run (after a $WARMUP warm-up per server), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
B=$tmp/bodies
run sluice /v1/decide "$sluice_url/v1/decide" "$B/sluice_decide.txt" 16 1 "$WARMUP"
for c in 1 16 256; do
  run sluice /v1/decide "$sluice_url/v1/decide" "$B/sluice_decide.txt" "$c" 1
done
run sluice /v1/decide/batch "$sluice_url/v1/decide/batch" "$B/sluice_batch.txt" 16 "$BATCH"
run cerbos /api/check/resources "$cerbos_url/api/check/resources" "$B/cerbos_check.txt" 16 1 "$WARMUP"
for c in 1 16 256; do
  run cerbos /api/check/resources "$cerbos_url/api/check/resources" "$B/cerbos_check.txt" "$c" 1
done
run cerbos "/api/check/resources ($BATCH resources)" "$cerbos_url/api/check/resources" "$B/cerbos_batch.txt" 16 "$BATCH"

# What the servers say after the runs: Sluice's error counters, both servers' memory.
errors=$(curl -s "$sluice_url/metrics" | grep '^sluice_request_errors_total' || true)
[ -z "$errors" ] || say "sluice request errors: $errors"
rss() { awk '/^VmRSS/ {printf "%.0f MiB", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "?"; }
say "resident memory after the runs: sluice $(rss "$sluice_pid"), cerbos $(rss "$cerbos_pid")"
if grep -v 'listening on' "$tmp/sluice.log" | grep -q .; then
  say "sluice serve's stderr:"; grep -v 'listening on' "$tmp/sluice.log" | tail -20 >&2
fi
[ -z "${RESULTS:-}" ] || cp "$results" "$RESULTS"

# ---------------------------------------------------------------- the table
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$results" "$rev" "$("$SLUICE_BIN" --version)" "$CERBOS_VERSION" "$DURATION" "$check_line" <<'PY'
import datetime, json, sys
path, rev, sluice_version, cerbos_version, duration, check = sys.argv[1:]
rows = [json.loads(l) for l in open(path)]

def lat(us):
    return f"{us} µs" if us < 1000 else f"{us / 1000:.2f} ms"

def num(x):
    return f"{x:,.0f}"

print()
print(f"{datetime.date.today().isoformat()}, at {rev} ({sluice_version}; Cerbos {cerbos_version}), "
      f"wrk {duration} a run, keep-alive, 2 threads (1 at 1 connection)")
print()
print("| target | endpoint | connections | requests/s | decisions/s | p50 | p99 | p99.9 |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    print(f"| {r['target']} | `{r['endpoint']}` | {r['connections']} | {num(r['rps'])} | "
          f"{num(r['decisions_per_s'])} | {lat(r['p50_us'])} | {lat(r['p99_us'])} | {lat(r['p999_us'])} |")

def find(target, per):
    for r in rows:
        if r["target"] == target and r["connections"] == 16 and r["per_request"] == per:
            return r

print()
for per, what in ((1, "one call a request"), (32, "32 calls a request")):
    s, c = find("sluice", per), find("cerbos", per)
    if s and c:
        print(f"Sluice/Cerbos at 16 connections, {what}: {s['decisions_per_s'] / c['decisions_per_s']:.1f}× "
              f"the decisions/s, p50 {c['p50_us'] / max(s['p50_us'], 1):.1f}× lower")
print()
print(check)
print("non-2xx answers and socket errors: "
      + str(sum(r["non2xx"] + sum(r["errors"].values()) for r in rows)))
PY
exit $failed
