#!/usr/bin/env python3
"""reel's interop test client, on the Python `mcp` SDK 2.3 `Client`.

    python client.py everything|demo [--mode auto|legacy] -- SERVER_CMD [ARGS...]

Connects over stdio to SERVER_CMD (in `auto` mode the SDK first probes with
server/discover and falls back to initialize when refused), runs a fixed script of
requests, and prints one line per step: `RESULT <step> <sha256 of the result>`, where
the result is reduced to what does not change between honest runs. A run through
`reel rec` must print exactly what a direct run prints. Ends with `ALL OK`.

- `everything`: @modelcontextprotocol/server-everything (legacy era after the probe):
  tools incl. progress, resources, prompts, completion, logging, and the server's own
  requests (sampling/createMessage, elicitation/create, roots/list) answered here.
- `demo`: tests/peers/demo_server.py (2026-07-28 in auto mode).
"""
import argparse
import hashlib
import json
import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

asked = {"sampling": 0, "elicitation": 0, "roots": 0}
progress: list[float] = []


def result(step: str, value) -> None:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    print(f"RESULT {step} {hashlib.sha256(text.encode()).hexdigest()}", flush=True)


async def on_sampling(ctx, params):
    asked["sampling"] += 1
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="a canned answer from the test client"),
        model="reel-test-model",
        stop_reason="endTurn",
    )


async def on_elicitation(ctx, params):
    asked["elicitation"] += 1
    schema = getattr(params, "requested_schema", None) or {}
    answers = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "enum" in prop:
            answers[name] = prop["enum"][0]
        elif "oneOf" in prop:
            answers[name] = prop["oneOf"][0]["const"]
        elif prop.get("type") == "boolean":
            answers[name] = False
        elif prop.get("type") in ("integer", "number"):
            answers[name] = prop.get("minimum", 3)
        elif prop.get("type") == "array":
            items = prop.get("items") or {}
            choices = items.get("enum") or [o["const"] for o in items.get("anyOf", [])] or ["one"]
            answers[name] = choices[:1]
        else:
            answers[name] = {"email": "test@example.org", "uri": "https://example.org/x",
                             "date": "2026-01-02", "date-time": "2026-01-02T03:04:05Z"}.get(prop.get("format"), "answer")
    return types.ElicitResult(action="accept", content=answers)


async def on_roots(ctx):
    asked["roots"] += 1
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/reel-test", name="reel-test")])


async def on_progress(done: float, total, message) -> None:
    progress.append(done)


async def everything(client: Client) -> None:
    result("connect", {"protocol": client.protocol_version, "server": client.server_info.name})
    tools = await client.list_tools()
    names = sorted(t.name for t in tools.tools)
    result("tools/list", names)
    result("echo", await client.call_tool("echo", {"message": "through reel"}))
    result("get-sum", await client.call_tool("get-sum", {"a": 40, "b": 2}))
    r = await client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 3},
                               progress_callback=on_progress)
    result("long-running", {"result": r.model_dump(mode="json", exclude_none=True), "progress": progress})
    resources = await client.list_resources()
    result("resources/list", sorted(r.uri for r in resources.resources))
    templates = await client.list_resource_templates()
    result("resources/templates/list", sorted(t.uri_template for t in templates.resource_templates))
    static = sorted(r.uri for r in resources.resources if "/static/" in r.uri)[0]
    result("resources/read", await client.read_resource(static))
    prompts = await client.list_prompts()
    result("prompts/list", sorted(p.name for p in prompts.prompts))
    result("prompts/get", await client.get_prompt("args-prompt", {"city": "Lyon", "state": "ARA"}))
    comp = await client.complete(types.PromptReference(type="ref/prompt", name="completable-prompt"),
                                 {"name": "department", "value": "E"})
    result("completion/complete", comp)
    await client.set_logging_level("info")
    result("logging/setLevel", "ok")
    result("sampling", await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 16}))
    result("elicitation", await client.call_tool("trigger-elicitation-request", {}))
    # server-everything asks roots/list about 350 ms after initialization.
    await anyio.sleep(0.6)
    result("roots", await client.call_tool("get-roots-list", {}))
    result("asked", asked)


async def demo(client: Client) -> None:
    result("connect", {"protocol": client.protocol_version, "server": client.server_info.name})
    result("tools/list", sorted(t.name for t in (await client.list_tools()).tools))
    result("add", await client.call_tool("add", {"a": 2, "b": 40}))
    result("shout", await client.call_tool("shout", {"text": "ünïcode through reel"}))
    r = await client.call_tool("count_down", {"start": 3}, progress_callback=on_progress)
    result("count_down", {"result": r.model_dump(mode="json", exclude_none=True), "progress": progress})
    result("resources/list", sorted(r.uri for r in (await client.list_resources()).resources))
    result("resources/read", await client.read_resource("note://readme"))
    result("prompts/list", sorted(p.name for p in (await client.list_prompts()).prompts))
    result("prompts/get", await client.get_prompt("summarize", {"topic": "stdio"}))


async def main_async(suite: str, mode: str, cmd: list[str]) -> None:
    server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    async with Client(server, mode=mode, sampling_callback=on_sampling, elicitation_callback=on_elicitation,
                      list_roots_callback=on_roots, read_timeout_seconds=60) as client:
        await (everything if suite == "everything" else demo)(client)


def main() -> int:
    if "--" not in sys.argv:
        sys.stderr.write(__doc__)
        return 64
    split = sys.argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", choices=["everything", "demo"])
    ap.add_argument("--mode", default="auto")
    a = ap.parse_args(sys.argv[1:split])
    anyio.run(main_async, a.suite, a.mode, sys.argv[split + 1:])
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
