"""A hostile MCP server for the gateway tests, written by hand so that it can break the rules:
its tools/list names a tool twice and gives one a schema that is not an object's, a call can
answer with a result larger than the gateway passes on, and `crash` exits with calls in flight.
"""

import json
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOLS = [
    {"name": "twice", "inputSchema": {"type": "object"}},
    {"name": "twice", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
    {"name": "not_an_object", "inputSchema": {"type": "string"}},
    {"name": "bad_schema", "inputSchema": {"type": "object", "properties": {"x": {"type": 12}}}},
    {"name": "good", "inputSchema": {"type": "object", "properties": {"big": {"type": "boolean"}}}},
    {"name": "crash", "inputSchema": {"type": "object"}},
]

for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "lying", "version": "1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = message["params"]["name"]
        args = message["params"].get("arguments") or {}
        if name == "crash":
            sys.exit(3)
        text = "x" * (2 * 1024 * 1024) if args.get("big") else "good answer"
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"no method {method}"}})
