#!/usr/bin/env bash
# One hook call, the whole process, side by side in one hyperfine run: `sluice hook claude`
# against the default chain (every set `sluice init` configures), and the two Rust guards people
# install for the same job, destructive_command_guard (dcg) and safe-chains, on the same Claude
# Code PreToolUse events. The peers are built from the Rust registry into a cache:
#
#   tests/harnesses/bench.sh            # builds what is missing, then measures
#
# How the peers are built: tests/harnesses/peers.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/harnesses/peers.sh

# The binary as `cargo install --profile dist` builds it, or SLUICE_BIN, already built.
if [ -z "${SLUICE_BIN:-}" ]; then
  cargo build --profile dist --quiet
fi
SLUICE="${SLUICE_BIN:-$PWD/target/dist/sluice}"
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
(cd "$project" && "$SLUICE" init >/dev/null)

event() {
  printf '{"session_id":"bench","transcript_path":"/tmp/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"toolu_1"}\n' "$project" "$1"
}
event 'git status && cargo test --workspace' >"$project/everyday.json"
event 'rm -rf ~/' >"$project/destructive.json"

cd "$project"
echo "| command | sluice (default chain) | dcg | safe-chains |"
echo "| --- | --- | --- | --- |"
for kind in everyday destructive; do
  hyperfine --warmup 5 --runs "${RUNS:-50}" --export-json "$project/$kind.json.out" \
    -n "sluice" "$SLUICE hook claude < $kind.json" \
    -n "dcg" "$DCG < $kind.json" \
    -n "safe-chains" "$SAFE_CHAINS < $kind.json" >/dev/null
  # Medians, and each as a multiple of the fastest: these machines are noisy.
  python3 - "$project/$kind.json.out" "$kind" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
medians = [r["median"] * 1000 for r in results]
best = min(medians)
cells = " | ".join(f"{m:.1f} ms ({m / best:.1f}x)" for m in medians)
print(f"| {sys.argv[2]} | {cells} |")
PY
done
/usr/bin/time -f "sluice peak memory: %M KiB" "$SLUICE" hook claude <everyday.json >/dev/null
