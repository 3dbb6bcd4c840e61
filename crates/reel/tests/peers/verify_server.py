#!/usr/bin/env python3
"""reel's `verify` test server, on the Python `mcp` SDK 2.x `MCPServer`, stdio only.

    python verify_server.py [--alter TOOL] [--remove TOOL] [--hang TOOL] [--die TOOL]
                            [--crash] [--legacy-only]

It speaks both eras: a 2026-07-28 client discovers it with server/discover and sends
per-request _meta (a tool that needs the user answers with `input_required`); a legacy
client runs initialize (the same tool sends `elicitation/create`).

Tools: `add` (a + b), `shout` (capitals), `count` (progress per step and a log
message), `clock` (the current time in nanoseconds: differs on every call),
`confirm` (asks the user first), `credentials` (a fresh GitHub-style token: a secret
that reel's redaction removes). Resource `note://readme`; prompt `summarize`.

Flags change it the way a regression would:
  --alter TOOL   `add` answers a + b + 1, `shout` answers in lower case
  --remove TOOL  the tool is not registered
  --hang TOOL    the tool never returns
  --die TOOL     the process exits (status 4) when the tool is called
  --crash        exit with status 3 before reading anything
  --legacy-only  refuse server/discover with -32601, like a server of the legacy era
                 (a shim in front of the same server, run as a child process)
"""
import argparse
import json
import os
import random
import string
import subprocess
import sys
import threading
import time
from typing import Annotated

import anyio
from pydantic import BaseModel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve

ap = argparse.ArgumentParser()
ap.add_argument("--alter", action="append", default=[])
ap.add_argument("--remove", action="append", default=[])
ap.add_argument("--hang", action="append", default=[])
ap.add_argument("--die", action="append", default=[])
ap.add_argument("--crash", action="store_true")
ap.add_argument("--legacy-only", action="store_true")
flags = ap.parse_args()

if flags.crash:
    sys.stderr.write("verify_server: refusing to start (--crash)\n")
    sys.exit(3)


def legacy_shim() -> int:
    """Answers server/discover with -32601 and passes every other line to the same
    server without --legacy-only, whose stdout is ours."""
    argv = [a for a in sys.argv[1:] if a != "--legacy-only"]
    child = subprocess.Popen([sys.executable, __file__, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    lock = threading.Lock()

    def write(line: bytes) -> None:
        with lock:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    def pump() -> None:
        for line in child.stdout:
            write(line)

    out = threading.Thread(target=pump)
    out.start()
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("method") == "server/discover" and "id" in msg:
            error = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
            write((json.dumps(error) + "\n").encode())
            continue
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    out.join()
    return child.wait()


if flags.legacy_only:
    sys.exit(legacy_shim())

server = MCPServer("reel-verify", instructions="reel verify test server.")


def tool(fn):
    """Registers `fn` unless --remove names it."""
    if fn.__name__ not in flags.remove:
        server.tool()(fn)
    return fn


async def hang_if_asked(name: str) -> None:
    if name in flags.die:
        sys.stderr.write(f"verify_server: dying in {name} (--die)\n")
        sys.stderr.flush()
        os._exit(4)
    if name in flags.hang:
        await anyio.sleep_forever()


@tool
async def add(a: int, b: int) -> int:
    """Adds two integers."""
    await hang_if_asked("add")
    return a + b + (1 if "add" in flags.alter else 0)


@tool
async def shout(text: str) -> str:
    """Returns the text in capitals."""
    await hang_if_asked("shout")
    return text.lower() if "shout" in flags.alter else text.upper() + "!"


@tool
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting each step as progress."""
    await hang_if_asked("count")
    for i in range(1, steps + 1):
        await anyio.sleep(0.01)
        await ctx.report_progress(i, steps, f"step {i}")
    await ctx.info(f"counted to {steps}")
    return f"counted to {steps}"


@tool
async def clock() -> str:
    """The current time, in nanoseconds since the epoch."""
    await hang_if_asked("clock")
    return f"now={time.time_ns()}"


@tool
async def credentials() -> str:
    """A fresh access token, as a careless server might hand one out."""
    await hang_if_asked("credentials")
    token = "ghp_" + "".join(random.choices(string.ascii_letters + string.digits, k=36))
    return f"use {token} to connect"


class Answer(BaseModel):
    ok: bool


def ask() -> Elicit[Answer]:
    return Elicit("Go ahead?", Answer)


@tool
async def confirm(item: str, answer: Annotated[Answer, Resolve(ask)]) -> str:
    """Asks the user before it acts on `item`."""
    await hang_if_asked("confirm")
    return f"{item}: " + ("confirmed" if answer.ok else "declined")


@server.resource("note://readme")
def readme() -> str:
    """A short static note."""
    return "reel verify replays a recorded client against a live server."


@server.prompt()
def summarize(topic: str) -> str:
    """Asks for a summary of a topic."""
    return f"Summarize {topic} in three sentences."


if __name__ == "__main__":
    server.run("stdio")
