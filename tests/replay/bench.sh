#!/usr/bin/env bash
# Replay of 100,000 recorded calls: the default chain's corpus (compiler/benches/corpus.jsonl)
# repeated, decided under the starter configuration and under the same without git-guard.
#
#   tests/replay/bench.sh          # release build, then hyperfine (3 runs)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
SLUICE="$PWD/target/release/sluice"
CORPUS="$PWD/compiler/benches/corpus.jsonl"
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
cd "$project"
"$SLUICE" init >/dev/null
python3 - "$CORPUS" <<'PY'
import sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if l.strip()]
out = (lines * (100_000 // len(lines) + 1))[:100_000]
open("log.jsonl", "w").write("\n".join(out) + "\n")
text = open("sluice.toml").read()
open("edited.toml", "w").write(text.replace('[[policy]]\nset = "builtin:git-guard"\n', ""))
PY
hyperfine --runs "${RUNS:-3}" -i "$SLUICE replay --log log.jsonl --against edited.toml"
