#!/usr/bin/env python3
"""reel's interop test client for concurrent calls, on the Python `mcp` SDK 2.3 `Client`.

    python concurrent_client.py CALLS stdio -- SERVER_CMD [ARGS...]
    python concurrent_client.py CALLS http URL

Connects to server-everything (over stdio to SERVER_CMD, or Streamable HTTP to URL) and
makes CALLS calls at once (asyncio.gather): call i is `trigger-long-running-operation`
lasting i * 50 ms, so live the results come apart. Prints `RESULT <i> <text>` per call
in order, then `ALL OK`.

The SDK validates a tool's result against the output schema of its cached tool list, and
every call that finishes before that cache is filled sends a `tools/list` of its own: how
many depends on timing. Live, the first result's `tools/list` fills the cache before the
next result comes, so the recording holds one; a replay that answers at once sees up to
CALLS of them, which must not be misses.
"""
import asyncio
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main_async(calls: int, target) -> None:
    async with Client(target, read_timeout_seconds=60) as client:
        results = await asyncio.gather(
            *(
                client.call_tool("trigger-long-running-operation", {"duration": i * 0.05, "steps": 1})
                for i in range(calls)
            )
        )
    for i, r in enumerate(results):
        if r.is_error:
            raise SystemExit(f"call {i} failed: {r}")
        print(f"RESULT {i} {r.content[0].text}", flush=True)


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] not in ("stdio", "http"):
        sys.stderr.write(__doc__)
        return 64
    calls, mode = int(args[0]), args[1]
    if mode == "stdio":
        cmd = args[3:] if args[2] == "--" else args[2:]
        target = StdioServerParameters(command=cmd[0], args=cmd[1:])
    else:
        target = args[2]
    anyio.run(main_async, calls, target)
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
