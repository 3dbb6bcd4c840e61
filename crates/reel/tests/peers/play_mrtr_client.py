#!/usr/bin/env python3
"""reel's input_required test client, on the Python `mcp` SDK 2.3 `Client`.

    python play_mrtr_client.py [--day DAY] [--mode auto|legacy] -- SERVER_CMD [ARGS...]

Calls `add` and then `book` on play_mrtr_server.py; the server asks for a day
(2026-07-28: an input_required round; legacy: elicitation/create) and this client
answers DAY (default `monday`). Prints `RESULT <step> <sha256>` per step, the text of
the booking, how often it was asked, and `ALL OK`.
"""
import argparse
import hashlib
import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

asked = {"elicitation": 0}


def result(step, value):
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    print(f"RESULT {step} {hashlib.sha256(text.encode()).hexdigest()}", flush=True)


async def run(cmd, day, mode):
    async def on_elicit(ctx, params):
        asked["elicitation"] += 1
        return types.ElicitResult(action="accept", content={"day": day})

    server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with Client(server, mode=mode, elicitation_callback=on_elicit, read_timeout_seconds=60) as c:
        result("connect", {"protocol": c.protocol_version, "server": c.server_info.name})
        result("add", await c.call_tool("add", {"a": 1, "b": 2}))
        r = await c.call_tool("book", {"city": "Lyon"})
        result("book", r)
        print("TEXT", r.content[0].text, flush=True)
        print("ASKED", asked["elicitation"], flush=True)


def main():
    split = sys.argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--day", default="monday")
    ap.add_argument("--mode", default="auto")
    a = ap.parse_args(sys.argv[1:split])
    anyio.run(run, sys.argv[split + 1:], a.day, a.mode)
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
