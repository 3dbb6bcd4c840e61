#!/usr/bin/env python3
"""reel's `subscriptions/listen` test client, on the Python `mcp` SDK 2.3 `Client`.

    python listen_client.py [--keep-open] [--skip-ids N] -- SERVER_CMD [ARGS...]  (stdio)
    python listen_client.py [--keep-open] [--skip-ids N] --url URL                (HTTP)

Opens `Client.listen(tools_list_changed=True)`, calls `add_tool(name="extra")`, waits
(at most 10 s) for the `ToolsListChanged` event, lists the tools, and prints one line per
step: `ACK <honored filter>`, `CALL <text>`, `EVENT <type name>`, `TOOLS <names>`, then
`ALL OK`. With `--keep-open` the session ends with the stream still open (the server
answers it as it shuts down); else the stream is closed first (`notifications/cancelled`).
Any error is printed and exits 1.
"""
import argparse
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def run(target, keep_open):
    async with Client(target) as client:
        listening = client.listen(tools_list_changed=True)
        sub = await listening.__aenter__()
        print("ACK", sub.honored.model_dump(exclude_none=True), flush=True)
        result = await client.call_tool("add_tool", {"name": "extra"})
        print("CALL", result.content[0].text, flush=True)
        with anyio.fail_after(10):
            event = await sub.__anext__()
        print("EVENT", type(event).__name__, flush=True)
        if not keep_open:
            await listening.__aexit__(None, None, None)
        tools = await client.list_tools()
        print("TOOLS", sorted(t.name for t in tools.tools), flush=True)
    print("ALL OK", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url")
    p.add_argument("--keep-open", action="store_true",
                   help="end the session with the listen stream still open (no cancel)")
    p.add_argument("--skip-ids", type=int, default=0,
                   help="advance the SDK's process-wide listen-N counter first, so the "
                        "listen request gets another id than a recording made without")
    p.add_argument("command", nargs="*")
    a = p.parse_args()
    from mcp.client import subscriptions
    for _ in range(a.skip_ids):
        next(subscriptions._listen_ids)
    if a.url:
        target = a.url
    else:
        target = StdioServerParameters(command=a.command[0], args=a.command[1:])
    try:
        anyio.run(run, target, a.keep_open)
    except BaseException as e:  # noqa: BLE001 - reported to the test
        print("ERROR", type(e).__name__, e, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
