"""The MCP gateway tests' client: the official Python SDK, driving `sluice mcp` over stdio.

Usage: client.py SCENARIO ROOT ELICIT GATEWAY...  (the gateway's command line, or its http:// URL)

Each scenario prints one JSON object of what it saw; tests/mcp/main.rs asserts on it. Nothing is
asserted here, so a changed behaviour shows as a changed observation, not a Python traceback.
"""

import json
import sys

import anyio
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def outcome(result):
    return {"error": bool(result.is_error), "text": text_of(result), "structured": result.structured_content}


async def error_of(call):
    try:
        result = await call
        return {"answered": outcome(result)}
    except Exception as error:  # an MCP error answer: the SDK raises it
        return {"rpc_error": str(error)}


def approver(action, approve):
    async def answer(context, params):
        answer.asked.append(params.message)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"approve": approve})
        return types.ElicitResult(action=action)

    answer.asked = []
    return answer


async def filesystem(session, seen, root):
    tools = await session.list_tools()
    seen["tools"] = sorted(t.name for t in tools.tools)
    seen["env_write"] = outcome(await session.call_tool("write_file", {"path": f"{root}/a.env", "content": "X=1"}))
    seen["plain_write"] = outcome(await session.call_tool("write_file", {"path": f"{root}/ok.txt", "content": "fine"}))
    seen["read"] = outcome(await session.call_tool("read_text_file", {"path": f"{root}/notes.txt"}))
    seen["outside"] = outcome(await session.call_tool("read_text_file", {"path": "/etc/hostname"}))
    seen["hidden_call"] = await error_of(session.call_tool("move_file", {"source": "a", "destination": "b"}))


async def everything(session, seen, _root):
    tools = await session.list_tools()
    seen["tools"] = sorted(t.name for t in tools.tools)
    seen["echo"] = outcome(await session.call_tool("echo", {"message": "hello tok_abcd1234"}))
    seen["structured"] = outcome(await session.call_tool("get-structured-content", {"location": "Chicago"}))
    seen["resources"] = len((await session.list_resources()).resources)
    seen["prompts"] = sorted(p.name for p in (await session.list_prompts()).prompts)
    seen["ask"] = outcome(await session.call_tool("echo", {"message": "ask me"}))


async def progress(session, seen, _root):
    updates = []

    async def on_progress(done, total, message):
        updates.append(done)

    result = await session.call_tool(
        "trigger-long-running-operation", {"duration": 2, "steps": 4}, progress_callback=on_progress
    )
    seen["result"] = outcome(result)
    seen["updates"] = updates


async def cancel(session, seen, _root):
    with anyio.move_on_after(1.5) as scope:
        await session.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 30})
    seen["cancelled"] = scope.cancelled_caught
    with anyio.fail_after(10):
        seen["after"] = outcome(await session.call_tool("echo", {"message": "still here"}))


async def timeout(session, seen, _root):
    with anyio.fail_after(20):
        seen["slow"] = outcome(await session.call_tool("trigger-long-running-operation", {"duration": 10, "steps": 5}))
    seen["after"] = outcome(await session.call_tool("echo", {"message": "still here"}))


async def lying(session, seen, _root):
    tools = await session.list_tools()
    seen["tools"] = sorted(t.name for t in tools.tools)
    seen["duplicate_call"] = await error_of(session.call_tool("twice", {}))
    seen["good"] = outcome(await session.call_tool("good", {}))
    seen["huge"] = outcome(await session.call_tool("good", {"big": True}))
    seen["crash"] = await error_of(session.call_tool("crash", {}))


async def reload(session, seen, root):
    seen["before"] = sorted(t.name for t in (await session.list_tools()).tools)
    policy = f"{root}/../policies/mcp.sluice"
    with open(policy) as file:
        text = file.read()
    start = text.index("gate never_move")
    end = text.index("precheck ask_echo_ask")
    with open(policy, "w") as file:
        file.write(text[:start] + text[end:])
    with anyio.fail_after(15):
        await CHANGED.wait()
    seen["after"] = sorted(t.name for t in (await session.list_tools()).tools)


async def several(session, seen, _root):
    """Two server-everything behind one gateway, named `everything` and `other`."""
    seen["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
    seen["echo"] = outcome(await session.call_tool("everything__echo", {"message": "hello tok_abcd1234"}))
    seen["ask"] = outcome(await session.call_tool("everything__echo", {"message": "ask me"}))
    seen["other_ask"] = outcome(await session.call_tool("other__echo", {"message": "ask me"}))
    seen["vetoed"] = outcome(await session.call_tool("other__echo", {"message": "forbidden"}))
    seen["hidden_call"] = await error_of(session.call_tool("other__get-env", {}))
    seen["no_server"] = await error_of(session.call_tool("nowhere__echo", {"message": "x"}))
    seen["prompts"] = sorted(p.name for p in (await session.list_prompts()).prompts)
    prompt = await session.get_prompt("other__simple-prompt")
    seen["prompt"] = prompt.messages[0].content.text
    reference = types.PromptReference(type="ref/prompt", name="other__completable-prompt")
    seen["completion"] = (await session.complete(reference, {"name": "department", "value": "E"})).completion.values
    resources = (await session.list_resources()).resources
    seen["resources"] = len(resources)
    read = await session.read_resource(resources[0].uri)
    seen["read"] = str(read.contents[0].uri)
    updates = []

    async def on_progress(done, total, message):
        updates.append(done)

    result = await session.call_tool(
        "other__trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress
    )
    seen["progress"] = {"result": outcome(result), "updates": updates}


CHANGED = anyio.Event()


async def on_message(message):
    if "ToolListChanged" in type(getattr(message, "root", message)).__name__:
        CHANGED.set()


SCENARIOS = {
    "filesystem": filesystem,
    "everything": everything,
    "progress": progress,
    "cancel": cancel,
    "timeout": timeout,
    "lying": lying,
    "reload": reload,
    "several": several,
}


async def modern(command, callback):
    """The SDK's high-level client, which probes `server/discover` and speaks 2026-07-28 where it can."""
    seen = {}
    server = command[0] if command[0].startswith("http://") else StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, elicitation_callback=callback) as client:
        seen["version"] = client.protocol_version
        seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        seen["echo"] = outcome(await client.call_tool("echo", {"message": "hello tok_abcd1234"}))
        seen["ask"] = outcome(await client.call_tool("echo", {"message": "ask me"}))
    return seen


async def main():
    scenario, root, elicit, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    seen = {}
    callback = None
    if elicit != "none":
        action, _, approve = elicit.partition(":")
        callback = approver(action, approve == "yes")
    if scenario == "modern":
        print(json.dumps(await modern(command, callback)))
        return
    if command[0].startswith("http://"):
        transport = streamable_http_client(command[0])
    else:
        transport = stdio_client(StdioServerParameters(command=command[0], args=command[1:]))
    async with transport as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback, message_handler=on_message) as session:
            await session.initialize()
            await SCENARIOS[scenario](session, seen, root)
    if callback is not None:
        seen["asked"] = callback.asked
    print(json.dumps(seen))


if __name__ == "__main__":
    anyio.run(main)
