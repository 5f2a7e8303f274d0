"""A Python agent asking `sluice serve` before each tool call, with nothing but the standard
library: what tests/serve/clients.rs runs against a real server. Exits 0 when every answer is
what an agent would act on."""

import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1]


def post(path, body):
    request = urllib.request.Request(
        BASE + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def may_run(tool, args):
    """The agent's guard: run the tool only on an explicit allow."""
    status, outcome = post("/v1/decide", {"tool": tool, "args": args, "agent": {"id": "py-agent"}})
    assert status == 200, (status, outcome)
    return outcome["decision"] == "allow", outcome


allowed, _ = may_run("bash", {"command": "git status"})
assert allowed
allowed, outcome = may_run("bash", {"command": "rm -rf ~/"})
assert not allowed and outcome["decision"] == "deny", outcome
assert outcome["rule"]["file"].startswith("builtin:"), outcome

status, batch = post("/v1/decide/batch", {"calls": [
    {"tool": "bash", "args": {"command": "ls"}},
    {"tool": "read_file", "args": {"path": "/root/.ssh/id_rsa"}},
]})
assert status == 200
assert [o["decision"] for o in batch["outcomes"]][0] == "allow", batch
assert batch["outcomes"][1]["decision"] in ("deny", "ask"), batch

status, checked = post("/v1/postcheck", {
    "tool": "bash", "args": {"command": "env"},
    "result": {"status": "ok", "content": "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"},
})
assert status == 200 and "AKIAIOSFODNN7EXAMPLE" not in checked["content"], checked

status, error = post("/v1/decide", {"tool": "bash", "argz": {}})
assert status == 400 and error["error"]["code"] == "invalid_call", error

status, decision = post("/access/v1/evaluation", {
    "subject": {"type": "agent", "id": "py-agent"},
    "action": {"name": "bash"},
    "resource": {"type": "tool_call", "id": "1", "properties": {"command": "git status"}},
})
assert status == 200 and decision["decision"] is True, decision

with urllib.request.urlopen(BASE + "/readyz", timeout=10) as answer:
    ready = json.load(answer)
assert len(ready["policy_hash"]) == 32, ready
print("python agent: ok")
