#!/usr/bin/env python3
"""reel's `verify` test client, on the Python `mcp` SDK 2.x `Client`: records the
sessions `reel verify` replays.

    python verify_client.py [--mode auto|legacy] STEP... -- SERVER_CMD [ARGS...]

Steps, run in order:
  tools                   tools/list
  call:NAME:JSON_ARGS     tools/call (with a progress callback)
  read:URI                resources/read
  prompt:NAME:JSON_ARGS   prompts/get
  sleep:SECONDS           wait (server-everything asks roots/list on a timer)

The server's own requests are answered with canned values (sampling: a fixed reply;
elicitation: `ok: true` or the first allowed value of each field; roots: one root).
In `auto` mode (the default) the SDK probes server/discover first and falls back to
initialize when refused. Prints `RESULT <step> <json>` per step and `ALL OK`.
"""
import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def on_sampling(ctx, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="a canned reply"),
        model="reel-verify-model",
        stop_reason="endTurn",
    )


async def on_elicitation(ctx, params):
    schema = getattr(params, "requested_schema", None) or {}
    answers = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind = prop.get("type")
        if "enum" in prop:
            answers[name] = prop["enum"][0]
        elif "oneOf" in prop:
            answers[name] = prop["oneOf"][0]["const"]
        elif kind == "boolean":
            answers[name] = True
        elif kind in ("integer", "number"):
            answers[name] = prop.get("minimum", 3)
        elif kind == "array":
            items = prop.get("items") or {}
            answers[name] = (items.get("enum") or [o["const"] for o in items.get("anyOf", [])] or ["one"])[:1]
        else:
            answers[name] = {"email": "test@example.org", "uri": "https://example.org/x",
                             "date": "2026-01-02", "date-time": "2026-01-02T03:04:05Z"}.get(prop.get("format"), "answer")
    return types.ElicitResult(action="accept", content=answers)


async def on_roots(ctx):
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/reel-verify", name="reel-verify")])


async def on_progress(done, total, message):
    pass


def show(step, value):
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    print(f"RESULT {step} {json.dumps(value, sort_keys=True, ensure_ascii=False)}", flush=True)


async def run(mode, steps, cmd):
    server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with Client(server, mode=mode, sampling_callback=on_sampling, elicitation_callback=on_elicitation,
                      list_roots_callback=on_roots, read_timeout_seconds=60) as client:
        for step in steps:
            op, _, rest = step.partition(":")
            if op == "tools":
                show(step, sorted(t.name for t in (await client.list_tools()).tools))
            elif op == "call":
                name, _, args = rest.partition(":")
                show(step, await client.call_tool(name, json.loads(args or "{}"), progress_callback=on_progress))
            elif op == "read":
                show(step, await client.read_resource(rest))
            elif op == "prompt":
                name, _, args = rest.partition(":")
                show(step, await client.get_prompt(name, json.loads(args or "{}")))
            elif op == "sleep":
                await anyio.sleep(float(rest))
            else:
                raise SystemExit(f"unknown step {step!r}")


def main():
    if "--" not in sys.argv:
        sys.stderr.write(__doc__)
        return 64
    split = sys.argv.index("--")
    args, cmd = sys.argv[1:split], sys.argv[split + 1:]
    mode = "auto"
    if args[:1] == ["--mode"]:
        mode, args = args[1], args[2:]
    anyio.run(run, mode, args, cmd)
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
