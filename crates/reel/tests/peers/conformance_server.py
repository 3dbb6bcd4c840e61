#!/usr/bin/env python3
"""reel's conformance fixture server: what `@modelcontextprotocol/conformance`'s server suite
expects to find, on the Python `mcp` 2.x low-level `Server`, over Streamable HTTP.

    python conformance_server.py PORT      # http://127.0.0.1:PORT/mcp (PORT 0: any free port)

Once it accepts connections it prints `conformance_server: listening on http://127.0.0.1:PORT/mcp`
on stderr (the port actually bound), so a test can start it on port 0 without a race.

One process serves both protocol eras, as the SDK does: a legacy client runs `initialize`
and gets a session, SSE answers (with an event store, so streams can be resumed) and
server-to-client requests (sampling, elicitation); a 2026-07-28 client sends per-request
`_meta`, and everything a legacy tool would ask mid-call comes back as an `input_required`
result instead. The names (tools `test_*`, resources `test://…`, prompts `test_*`) and
the exact answers are the ones each scenario's description in the suite asks for.

It is deterministic on purpose, so a recording of a suite run can be replayed: no clock,
no randomness in any answer body. What does change between runs: the SDK's session ids and
sealed `requestState` tokens, and the SSE event ids (a per-process counter, so they depend
on what ran before).

Limits: one process, in-memory state (subscriptions, the SSE event store: at most
`EVENT_LIMIT` events, oldest dropped); loopback only (the SDK's DNS-rebinding protection
is on, so only `127.0.0.1`, `localhost` and `[::1]` Host/Origin values are served).
"""

from __future__ import annotations

import base64
import socket
import struct
import sys
import zlib
from collections import OrderedDict
from typing import Any

import anyio
import uvicorn
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    Tool,
    UnsubscribeRequestParams,
)

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged

MODERN = "2026-07-28"
EVENT_LIMIT = 10_000


def png_1x1_red() -> str:
    """A 1x1 red PNG, built here rather than pasted, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def wav_silence() -> str:
    """A 10 ms, 8 kHz, 8-bit mono WAV of silence, base64."""
    samples = b"\x80" * 80
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return base64.b64encode(b"RIFF" + struct.pack("<I", len(body)) + body).decode()


PNG = png_1x1_red()
WAV = wav_silence()


# ---------------------------------------------------------------------------------------
# The SSE event store (resumability for legacy sessions)


class MemoryEventStore(EventStore):
    """Keeps the last `EVENT_LIMIT` events; ids are a per-process counter."""

    def __init__(self) -> None:
        self._events: OrderedDict[str, tuple[str, Any]] = OrderedDict()
        self._next = 0

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        self._next += 1
        event_id = str(self._next)
        self._events[event_id] = (stream_id, message)
        while len(self._events) > EVENT_LIMIT:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        if last_event_id not in self._events:
            return None
        stream_id = self._events[last_event_id][0]
        seen = False
        for event_id, (sid, message) in list(self._events.items()):
            if event_id == last_event_id:
                seen = True
                continue
            if seen and sid == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


# ---------------------------------------------------------------------------------------
# Helpers


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def result(*content: dict[str, Any], is_error: bool = False) -> CallToolResult:
    return CallToolResult.model_validate({"content": list(content), "isError": is_error})


def modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version == MODERN


def client_caps(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    caps = ctx.session.client_capabilities
    if caps is None:
        return {}
    return caps.model_dump(mode="json", by_alias=True, exclude_none=True)


def input_required(requests: dict[str, Any], state: str | None = None) -> InputRequiredResult:
    body: dict[str, Any] = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        body["requestState"] = state
    return InputRequiredResult.model_validate(body)


def ask_elicit(message: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def ask_sample(prompt: str, max_tokens: int) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": text(prompt)}], "maxTokens": max_tokens},
    }


ASK_ROOTS: dict[str, Any] = {"method": "roots/list", "params": {}}


def answers(params: Any) -> dict[str, Any]:
    """The client's `inputResponses`, as plain JSON."""
    responses = getattr(params, "input_responses", None) or {}
    return {k: v.model_dump(mode="json", by_alias=True, exclude_none=True) for k, v in responses.items()}


async def elicit_legacy(ctx: ServerRequestContext[Any, Any], message: str, schema: dict[str, Any]) -> dict[str, Any]:
    answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
    return answer.model_dump(mode="json", by_alias=True, exclude_none=True)


# ---------------------------------------------------------------------------------------
# Tools

Handler = Any
TOOLS: list[tuple[dict[str, Any], Handler]] = []

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str, schema: dict[str, Any] | None = None):
    def register(fn: Handler) -> Handler:
        TOOLS.append(({"name": name, "description": description, "inputSchema": schema or NO_ARGS}, fn))
        return fn

    return register


@tool("test_simple_text", "Returns a simple text response")
async def simple_text(ctx, args, params):
    return result(text("This is a simple text response for testing."))


@tool("test_image_content", "Returns a 1x1 red PNG")
async def image_content(ctx, args, params):
    return result({"type": "image", "data": PNG, "mimeType": "image/png"})


@tool("test_audio_content", "Returns a short WAV of silence")
async def audio_content(ctx, args, params):
    return result({"type": "audio", "data": WAV, "mimeType": "audio/wav"})


@tool("test_embedded_resource", "Returns an embedded text resource")
async def embedded_resource(ctx, args, params):
    return result(
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    )


@tool("test_multiple_content_types", "Returns text, an image and a resource")
async def multiple_content_types(ctx, args, params):
    return result(
        text("Multiple content types test:"),
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": '{"test":"data","value":123}',
            },
        },
    )


@tool("test_tool_with_logging", "Sends three log messages while it runs")
async def tool_with_logging(ctx, args, params):
    for i, message in enumerate(["Tool execution started", "Tool processing data", "Tool execution completed"]):
        if i:
            await anyio.sleep(0.05)
        await ctx.session.send_log_message(level="info", data=message, related_request_id=ctx.request_id)
    return result(text("Tool with logging executed successfully"))


@tool("test_logging_tool", "Logs one message (only when the request opted in to logging)")
async def logging_tool(ctx, args, params):
    await ctx.session.send_log_message(level="info", data="logging tool ran", related_request_id=ctx.request_id)
    return result(text("Logging tool executed"))


@tool("test_error_handling", "Always fails")
async def error_handling(ctx, args, params):
    return result(text("This tool intentionally returns an error for testing"), is_error=True)


@tool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100")
async def tool_with_progress(ctx, args, params):
    for i, done in enumerate([0, 50, 100]):
        if i:
            await anyio.sleep(0.05)
        await ctx.session.report_progress(done, 100, f"{done}% done")
    return result(text("Tool with progress completed"))


@tool(
    "test_sampling",
    "Asks the client's LLM",
    {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
)
async def sampling(ctx, args, params):
    prompt = str(args.get("prompt", ""))
    if modern(ctx):
        got = answers(params).get("sample")
        if got is None:
            return input_required({"sample": ask_sample(prompt, 100)})
    else:
        message = SamplingMessage.model_validate({"role": "user", "content": text(prompt)})
        got = (await ctx.session.create_message([message], max_tokens=100, related_request_id=ctx.request_id)).model_dump(
            by_alias=True, exclude_none=True
        )
    reply = got.get("content", {})
    return result(text(f"LLM response: {reply.get('text', '') if isinstance(reply, dict) else reply}"))


ELICIT_USER = {
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@tool(
    "test_elicitation",
    "Asks the user for a name and an email",
    {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
async def elicitation(ctx, args, params):
    message = str(args.get("message", ""))
    if modern(ctx):
        got = answers(params).get("user")
        if got is None:
            return input_required({"user": ask_elicit(message, **ELICIT_USER)})
    else:
        got = await elicit_legacy(ctx, message, {"type": "object", **ELICIT_USER})
    return result(text(f"User response: action={got.get('action')}, content={got.get('content')}"))


SEP1034 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330 = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


async def elicit_with_schema(ctx, params, message: str, schema: dict[str, Any]):
    if modern(ctx):
        got = answers(params).get("form")
        if got is None:
            return input_required(
                {"form": {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}}
            )
    else:
        got = await elicit_legacy(ctx, message, schema)
    return result(text(f"Elicitation completed: action={got.get('action')}, content={got.get('content')}"))


@tool("test_elicitation_sep1034_defaults", "Elicitation whose fields all carry defaults (SEP-1034)")
async def elicitation_defaults(ctx, args, params):
    return await elicit_with_schema(ctx, params, "Please review and update the form fields with defaults", SEP1034)


@tool("test_elicitation_sep1330_enums", "Elicitation with every enum schema variant (SEP-1330)")
async def elicitation_enums(ctx, args, params):
    return await elicit_with_schema(ctx, params, "Please select options from the enum fields", SEP1330)


# The 2020-12 vocabulary the suite looks for (SEP-1613, SEP-2106): `$schema`, `$defs` with an
# `$anchor`, `$ref`, composition (`allOf`/`anyOf`), conditionals (`if`/`then`/`else`).
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "postalAddress",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "reachBy": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"reachBy": {"const": "phone"}}, "required": ["reachBy"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", JSON_SCHEMA_2020_12)
async def json_schema_tool(ctx, args, params):
    return result(text(f"received {sorted(args)}"))


@tool("test_reconnection", "Closes its SSE stream mid-call; the answer arrives after the client resumes")
async def reconnection(ctx, args, params):
    if ctx.close_sse_stream is not None:
        await anyio.sleep(0.05)
        await ctx.close_sse_stream()
        await anyio.sleep(0.2)
    return result(text("Reconnection test completed successfully"))


@tool("test_missing_capability", "Needs the client's sampling capability (2026-07-28: refused without it)")
async def missing_capability(ctx, args, params):
    if "sampling" not in client_caps(ctx):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool needs the client's sampling capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    return result(text("sampling is declared"))


@tool("test_streaming_elicitation", "Asks for a confirmation (input_required on 2026-07-28)")
async def streaming_elicitation(ctx, args, params):
    if modern(ctx):
        if answers(params).get("confirm") is None:
            return input_required({"confirm": ask_elicit("Continue?", {"ok": {"type": "boolean"}}, ["ok"])})
        return result(text("confirmed"))
    got = await elicit_legacy(ctx, "Continue?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
    return result(text(f"action={got.get('action')}"))


BUS = InMemorySubscriptionBus()


@tool("test_trigger_tool_change", "Announces a change of the tool list to subscribers")
async def trigger_tool_change(ctx, args, params):
    await BUS.publish(ToolsListChanged())
    if not modern(ctx):
        await ctx.session.send_tool_list_changed()
    return result(text("tool list change announced"))


@tool("test_trigger_prompt_change", "Announces a change of the prompt list to subscribers")
async def trigger_prompt_change(ctx, args, params):
    await BUS.publish(PromptsListChanged())
    if not modern(ctx):
        await ctx.session.send_prompt_list_changed()
    return result(text("prompt list change announced"))


@tool(
    "test_custom_headers",
    "Echoes a region carried in the Mcp-Param-Region header as well as in the body",
    {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    },
)
async def custom_headers(ctx, args, params):
    return result(text(f"region={args.get('region')}"))


# --- 2026-07-28 input_required (multi round trip) tools. On a legacy session the same
# questions go out as server-to-client requests.

NAME_Q = ("What is your name?", {"name": {"type": "string"}}, ["name"])


async def legacy_round(ctx, requests: dict[str, Any]) -> dict[str, Any]:
    """Asks each question the legacy way and returns the answers keyed like inputResponses."""
    out: dict[str, Any] = {}
    for key, req in requests.items():
        if req["method"] == "elicitation/create":
            p = req["params"]
            out[key] = await elicit_legacy(ctx, p["message"], p["requestedSchema"])
        elif req["method"] == "sampling/createMessage":
            p = req["params"]
            msgs = [SamplingMessage.model_validate(m) for m in p["messages"]]
            got = await ctx.session.create_message(msgs, max_tokens=p["maxTokens"], related_request_id=ctx.request_id)
            out[key] = got.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            out[key] = (await ctx.session.list_roots()).model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


async def ask(ctx, params, requests: dict[str, Any], state: str | None = None):
    """The answers to `requests`, or the input_required result that asks for the missing ones."""
    if not modern(ctx):
        return await legacy_round(ctx, requests)
    got = answers(params)
    missing = {k: v for k, v in requests.items() if k not in got}
    if missing:
        return input_required(missing, state)
    return got


@tool("test_input_required_result_elicitation", "Asks for the user's name, then greets them")
async def ir_elicitation(ctx, args, params):
    got = await ask(ctx, params, {"user_name": ask_elicit(*NAME_Q)})
    if isinstance(got, InputRequiredResult):
        return got
    return result(text(f"Hello, {got['user_name'].get('content', {}).get('name')}!"))


@tool("test_input_required_result_sampling", "Asks the client's LLM for the capital of France")
async def ir_sampling(ctx, args, params):
    got = await ask(ctx, params, {"capital_question": ask_sample("What is the capital of France?", 100)})
    if isinstance(got, InputRequiredResult):
        return got
    return result(text(f"LLM said: {got['capital_question'].get('content', {}).get('text')}"))


@tool("test_input_required_result_list_roots", "Asks for the client's roots")
async def ir_list_roots(ctx, args, params):
    got = await ask(ctx, params, {"client_roots": ASK_ROOTS})
    if isinstance(got, InputRequiredResult):
        return got
    roots = [r.get("uri") for r in got["client_roots"].get("roots", [])]
    return result(text(f"Roots: {', '.join(roots)}"))


@tool("test_input_required_result_request_state", "Asks for a confirmation and checks its own state")
async def ir_request_state(ctx, args, params):
    question = {"confirm": ask_elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])}
    if not modern(ctx):
        await legacy_round(ctx, question)
        return result(text("state-ok: confirmed"))
    state = params.request_state
    if state is None or "confirm" not in answers(params):
        return input_required(question, "confirm-round-1")
    if state != "confirm-round-1":
        raise MCPError(code=INVALID_PARAMS, message="requestState is not the one this tool minted")
    return result(text("state-ok: confirmed"))


@tool("test_input_required_result_multiple_inputs", "Asks for a name, a greeting and the roots at once")
async def ir_multiple(ctx, args, params):
    got = await ask(
        ctx,
        params,
        {
            "user_name": ask_elicit(*NAME_Q),
            "greeting": ask_sample("Generate a greeting", 50),
            "client_roots": ASK_ROOTS,
        },
        "multiple-round-1",
    )
    if isinstance(got, InputRequiredResult):
        return got
    return result(text(f"Got {len(got)} answers"))


@tool("test_input_required_result_multi_round", "Asks two questions, one round each")
async def ir_multi_round(ctx, args, params):
    step1 = ask_elicit("Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])
    step2 = ask_elicit("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])
    if not modern(ctx):
        got = await legacy_round(ctx, {"step1": step1, "step2": step2})
        return result(text(f"Done: {got['step1'].get('content')} {got['step2'].get('content')}"))
    # The state says which round this is (and carries round one's answer into round three).
    state = params.request_state
    got = answers(params)
    if state is None or (state == "round-1" and "step1" not in got):
        return input_required({"step1": step1}, "round-1")
    if state == "round-1":
        return input_required({"step2": step2}, "round-2:" + str(got["step1"].get("content", {}).get("name", "")))
    if state.startswith("round-2:"):
        if "step2" not in got:
            return input_required({"step2": step2}, state)
        color = got["step2"].get("content", {}).get("color")
        return result(text(f"Done: {state[len('round-2:'):]} likes {color}"))
    raise MCPError(code=INVALID_PARAMS, message="unexpected requestState")


@tool("test_input_required_result_tampered_state", "Asks for a confirmation; its sealed state must come back intact")
async def ir_tampered(ctx, args, params):
    got = await ask(ctx, params, {"confirm": ask_elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])}, "tamper-round-1")
    if isinstance(got, InputRequiredResult):
        return got
    return result(text("state verified"))


@tool("test_input_required_result_capabilities", "Asks only what the client's capabilities allow")
async def ir_capabilities(ctx, args, params):
    caps = client_caps(ctx)
    wanted: dict[str, Any] = {}
    if "elicitation" in caps:
        wanted["user_name"] = ask_elicit(*NAME_Q)
    if "sampling" in caps:
        wanted["greeting"] = ask_sample("Generate a greeting", 50)
    if "roots" in caps:
        wanted["client_roots"] = ASK_ROOTS
    if not wanted:
        return result(text("The client declared no capability to ask with"))
    got = await ask(ctx, params, wanted)
    if isinstance(got, InputRequiredResult):
        return got
    return result(text(f"Got {sorted(got)}"))


TOOL_BY_NAME = {spec["name"]: (spec, fn) for spec, fn in TOOLS}


async def list_tools(ctx, params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult.model_validate({"tools": [spec for spec, _ in TOOLS], "ttlMs": 0, "cacheScope": "public"})


async def call_tool(ctx, params: CallToolRequestParams):
    entry = TOOL_BY_NAME.get(params.name)
    if entry is None:
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return await entry[1](ctx, params.arguments or {}, params)


# ---------------------------------------------------------------------------------------
# Resources

STATIC = {
    "test://static-text": ("Static Text Resource", "text/plain", "This is the content of the static text resource."),
    "test://static-binary": ("Static Binary Resource", "image/png", None),
    "test://watched-resource": ("Watched Resource", "text/plain", "This resource can be subscribed to."),
}


async def list_resources(ctx, params) -> ListResourcesResult:
    resources = [
        Resource.model_validate({"uri": uri, "name": name, "description": f"{name} for conformance tests", "mimeType": mime})
        for uri, (name, mime, _) in STATIC.items()
    ]
    return ListResourcesResult(resources=resources, ttl_ms=0, cache_scope="public")


async def list_templates(ctx, params) -> ListResourceTemplatesResult:
    template = ResourceTemplate.model_validate(
        {
            "uriTemplate": "test://template/{id}/data",
            "name": "Template Resource",
            "description": "Data for an id",
            "mimeType": "application/json",
        }
    )
    return ListResourceTemplatesResult(resource_templates=[template], ttl_ms=0, cache_scope="public")


async def read_resource(ctx, params: ReadResourceRequestParams) -> ReadResourceResult:
    uri = str(params.uri)
    if uri in STATIC:
        _, mime, body = STATIC[uri]
        content = {"uri": uri, "mimeType": mime, **({"text": body} if body is not None else {"blob": PNG})}
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        ident = uri[len("test://template/") : -len("/data")]
        data = f'{{"id":"{ident}","templateTest":true,"data":"Data for ID: {ident}"}}'
        content = {"uri": uri, "mimeType": "application/json", "text": data}
    else:
        raise MCPError(code=INVALID_PARAMS, message="Resource not found", data={"uri": uri})
    return ReadResourceResult.model_validate({"contents": [content], "ttlMs": 0, "cacheScope": "public"})


SUBSCRIBED: set[str] = set()


async def subscribe(ctx, params: SubscribeRequestParams) -> EmptyResult:
    SUBSCRIBED.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(ctx, params: UnsubscribeRequestParams) -> EmptyResult:
    SUBSCRIBED.discard(str(params.uri))
    return EmptyResult()


# ---------------------------------------------------------------------------------------
# Prompts

PROMPTS = [
    Prompt(name="test_simple_prompt", description="A prompt without arguments"),
    Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two required arguments",
        arguments=[
            PromptArgument(name="arg1", description="First test argument", required=True),
            PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource",
        arguments=[PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    ),
    Prompt(name="test_prompt_with_image", description="A prompt with an image"),
    Prompt(name="test_input_required_result_prompt", description="A prompt that first asks for context"),
]


async def list_prompts(ctx, params) -> ListPromptsResult:
    return ListPromptsResult(prompts=PROMPTS, ttl_ms=0, cache_scope="public")


def user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


async def get_prompt(ctx, params: GetPromptRequestParams):
    args = params.arguments or {}
    if params.name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        messages = [user(text(f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"))]
    elif params.name == "test_prompt_with_embedded_resource":
        resource = {"uri": args.get("resourceUri", ""), "mimeType": "text/plain", "text": "Embedded resource content for testing."}
        messages = [user({"type": "resource", "resource": resource}), user(text("Please process the embedded resource above."))]
    elif params.name == "test_prompt_with_image":
        messages = [
            user({"type": "image", "data": PNG, "mimeType": "image/png"}),
            user(text("Please analyze the image above.")),
        ]
    elif params.name == "test_input_required_result_prompt":
        q = ask_elicit("What context should the prompt use?", {"context": {"type": "string"}}, ["context"])
        got = await ask(ctx, params, {"user_context": q})
        if isinstance(got, InputRequiredResult):
            return got
        messages = [user(text(f"Use this context: {got['user_context'].get('content', {}).get('context')}"))]
    else:
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    return GetPromptResult.model_validate({"messages": messages})


# ---------------------------------------------------------------------------------------
# Completion and logging


async def complete(ctx, params: CompleteRequestParams) -> CompleteResult:
    candidates = ["paris", "park", "party", "test", "testing"]
    prefix = params.argument.value
    values = [c for c in candidates if c.startswith(prefix)]
    return CompleteResult(completion=Completion(values=values, total=len(values), has_more=False))


async def set_level(ctx, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


def build() -> Server[Any]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server: Server[Any] = Server(
            "reel-conformance",
            version="1.0.0",
            instructions="reel's conformance fixture server.",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
            on_subscriptions_listen=ListenHandler(BUS),
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_completion=complete,
            on_set_logging_level=set_level,
        )
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=server.name))
    return server


async def serve(port: int) -> None:
    app = build().streamable_http_app(host="127.0.0.1", event_store=MemoryEventStore(), retry_interval=500)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        bound = sock.getsockname()[1]
        print(f"conformance_server: listening on http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])


def main() -> None:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: conformance_server.py PORT")
    anyio.run(serve, int(sys.argv[1]))


if __name__ == "__main__":
    main()
