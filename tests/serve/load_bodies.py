#!/usr/bin/env python3
"""Turn compiler/benches/corpus.jsonl into wrk body files, one request body a line.

    python3 tests/serve/load_bodies.py CORPUS OUTDIR [--batch 32]

writes into OUTDIR:
  sluice_decide.txt   one call per line (POST /v1/decide), the corpus as it is
  sluice_batch.txt    {"calls": [32 calls]} per line (POST /v1/decide/batch)
  cerbos_check.txt    one Cerbos CheckResources request with one resource per line
                      (POST /api/check/resources)
  cerbos_batch.txt    the same with 32 resources per request
A batch line i holds the calls i*32 .. i*32+31 of the corpus, wrapping round at its end, so
every call is in some batch. Standard library only.

A Cerbos resource is one call: kind "tool_call", action "call", and as attributes the tool and
the strings command, path, url, workspace and home ("" when the call has none), which is what
tests/serve/cerbos/policies/tool_call.yaml reads.
"""
import json
import sys
from pathlib import Path

PRINCIPAL = {"id": "agent", "roles": ["agent"]}


def cerbos_resource(call, i):
    args = call.get("args", {})
    ctx = call.get("context", {})
    attr = {
        "tool": call["tool"],
        "command": args.get("command", ""),
        "path": args.get("path", ""),
        "url": args.get("url", ""),
        "workspace": ctx.get("workspace", ""),
        "home": ctx.get("home", ""),
    }
    return {"actions": ["call"], "resource": {"kind": "tool_call", "id": str(i), "attr": attr}}


def cerbos_request(calls, first, request_id):
    return {
        "requestId": request_id,
        "principal": PRINCIPAL,
        "resources": [cerbos_resource(c, first + k) for k, c in enumerate(calls)],
    }


def dump(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def load(corpus):
    calls = []
    for n, line in enumerate(Path(corpus).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            calls.append(json.loads(line))
    if not calls:
        sys.exit(f"{corpus}: no calls")
    return calls


def batches(calls, size):
    count = (len(calls) + size - 1) // size
    for b in range(count):
        yield b * size, [calls[(b * size + k) % len(calls)] for k in range(size)]


def main():
    argv = sys.argv[1:]
    size = 32
    if "--batch" in argv:
        i = argv.index("--batch")
        size = int(argv[i + 1])
        del argv[i : i + 2]
    if len(argv) != 2:
        sys.exit(__doc__)
    calls = load(argv[0])
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "sluice_decide.txt": [dump(c) for c in calls],
        "sluice_batch.txt": [dump({"calls": b}) for _, b in batches(calls, size)],
        "cerbos_check.txt": [dump(cerbos_request([c], i, f"r{i}")) for i, c in enumerate(calls)],
        "cerbos_batch.txt": [
            dump(cerbos_request(b, first, f"b{first}")) for first, b in batches(calls, size)
        ],
    }
    for name, lines in files.items():
        if any("\n" in l for l in lines):
            sys.exit(f"{name}: a body holds a newline")
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{out / name}: {len(lines)} bodies", file=sys.stderr)


if __name__ == "__main__":
    main()
