"""The gateway's added latency per tools/call over stdio: the same calls to the same server,
straight and through `sluice mcp`, from the official Python SDK, interleaved in rounds so that
both see the same machine. Prints medians and the difference.

Usage: latency.py CALLS SERVER_COMMAND... -- GATEWAY_COMMAND...
"""

import statistics
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def timings(command, calls):
    params = StdioServerParameters(command=command[0], args=command[1:])
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for _ in range(20):  # warm up both ends
                await session.call_tool("echo", {"message": "warm"})
            for _ in range(calls):
                start = time.perf_counter_ns()
                await session.call_tool("echo", {"message": "hello"})
                out.append((time.perf_counter_ns() - start) / 1000)
    return out


async def main():
    calls = int(sys.argv[1])
    rest = sys.argv[2:]
    split = rest.index("--")
    direct, gateway = rest[:split], rest[split + 1 :]
    straight, through = [], []
    for _ in range(5):
        straight += await timings(direct, calls // 5)
        through += await timings(gateway, calls // 5)
    a, b = statistics.median(straight), statistics.median(through)
    print(f"direct   median {a:8.1f} us  p90 {statistics.quantiles(straight, n=10)[-1]:8.1f} us  ({len(straight)} calls)")
    print(f"gateway  median {b:8.1f} us  p90 {statistics.quantiles(through, n=10)[-1]:8.1f} us  ({len(through)} calls)")
    print(f"added    median {b - a:8.1f} us  ({b / a:.2f}x)")


anyio.run(main)
