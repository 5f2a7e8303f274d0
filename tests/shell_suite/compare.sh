#!/usr/bin/env bash
# The adversarial shell suite (attacks.toml, everyday.toml) through three Claude Code
# PreToolUse hooks: sluice with the default chain, destructive_command_guard (dcg) 0.16.0 and
# safe-chains. Each case is one hook process fed one event on stdin; the answer is read from
# its output (hookSpecificOutput.permissionDecision) or its exit status (2 blocks).
#
#   tests/shell_suite/compare.sh        # builds what is missing, then prints a markdown table
#
# Every case's three answers go to target/shell-suite-compare.tsv.
#
# The peers are built once into ~/.cache/sluice-peers by tests/harnesses/peers.sh, the cache
# tests/harnesses/bench.sh uses. SLUICE names another sluice binary (the default is the dev
# build).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/harnesses/peers.sh

if [ -z "${SLUICE:-}" ]; then
  cargo build --quiet --bin sluice
  SLUICE="$PWD/target/debug/sluice"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The starter's sets, with the threat model's paths (as tests/shell_suite.rs builds them).
cat >"$work/sluice.toml" <<'EOF'
[[policy]]
set = "builtin:shell-safety"

[[policy]]
set = "builtin:git-guard"

[[policy]]
set = "builtin:coding-agent"

[[policy]]
set = "builtin:secrets-redaction"

[context]
workspace = "/home/dev/project"
home = "/home/dev"
cwd = "$cwd"
allowed_hosts = ["example.com"]
EOF

python3 - "$PWD/tests/shell_suite" "$work" "$SLUICE" "$DCG" "$SAFE_CHAINS" "$PWD/target/shell-suite-compare.tsv" <<'PY'
import json, os, subprocess, sys, tomllib
from concurrent.futures import ThreadPoolExecutor

suite, work, sluice, dcg, safe_chains, report = sys.argv[1:7]
tools = [
    ("sluice (default chain)", [sluice, "hook", "claude", "--config", f"{work}/sluice.toml"]),
    ("dcg 0.16.0", [dcg]),
    ("safe-chains", [safe_chains]),
]

def answer(argv, case):
    event = {
        "session_id": "suite", "transcript_path": "/tmp/t.jsonl",
        "cwd": case.get("cwd", "/home/dev/project"), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": case["command"]}, "tool_use_id": "toolu_1",
    }
    try:
        # As Claude Code runs every hook: with the project's directory in CLAUDE_PROJECT_DIR.
        env = dict(os.environ, CLAUDE_PROJECT_DIR="/home/dev/project")
        run = subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True,
                             timeout=60, cwd=work, env=env)
    except subprocess.TimeoutExpired:
        return "timeout"
    if run.returncode == 2:
        return "deny"
    for line in reversed(run.stdout.decode(errors="replace").splitlines()):
        try:
            out = json.loads(line)
        except ValueError:
            continue
        decision = (out.get("hookSpecificOutput") or {}).get("permissionDecision")
        if decision in ("deny", "ask", "allow"):
            return decision
    return "none"

rows = []
per_case = {}
for name, argv in tools:
    counts = {}
    for kind in ("attacks", "everyday"):
        cases = tomllib.load(open(f"{suite}/{kind}.toml", "rb"))["case"]
        with ThreadPoolExecutor(max_workers=2) as pool:
            answers = list(pool.map(lambda c: answer(argv, c), cases))
        counts[kind] = {k: answers.count(k) for k in ("deny", "ask", "allow", "none", "timeout")}
        counts[kind]["cases"] = len(cases)
        for case, said in zip(cases, answers):
            key = (kind, case["category"], case["command"], case.get("cwd", ""))
            per_case.setdefault(key, []).append(said)
    rows.append((name, counts))

# Every case's answers, one line each, for finding what one hook stops and another does not.
with open(report, "w") as out:
    out.write("\t".join(["suite", "category", "cwd"] + [n for n, _ in tools] + ["command"]) + "\n")
    for (kind, category, command, cwd), said in per_case.items():
        out.write("\t".join([kind, category, cwd] + said + [json.dumps(command)]) + "\n")

def pct(part, whole):
    return f"{100.0 * part / whole:.1f}%"

print("| hook | attacks stopped (deny or ask) | attacks allowed outright | attacks unanswered | everyday denied | everyday asked | everyday allowed outright | everyday unanswered |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, c in rows:
    a, e = c["attacks"], c["everyday"]
    cells = [
        pct(a["deny"] + a["ask"] + a["timeout"], a["cases"]), pct(a["allow"], a["cases"]),
        pct(a["none"], a["cases"]), pct(e["deny"] + e["timeout"], e["cases"]),
        pct(e["ask"], e["cases"]), pct(e["allow"], e["cases"]), pct(e["none"], e["cases"]),
    ]
    print(f"| {name} | " + " | ".join(cells) + " |")
print()
print(f"{rows[0][1]['attacks']['cases']} attacks, {rows[0][1]['everyday']['cases']} everyday commands. "
      "A timeout counts as stopped. An unanswered call goes to Claude Code's own permission "
      "settings; one allowed outright skips them.")
PY
