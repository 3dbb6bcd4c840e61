#!/usr/bin/env python3
"""A scripted model API for `reel llm`'s tests: the Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses and Ollama chat wire formats, answered from scripts
chosen by the request's `model`.

    python llm_upstream.py [--port 0] [--tls CERT KEY]
        -> prints `listening on http://127.0.0.1:PORT` (https with --tls), then serves

Standard library only. HTTP/1.1 with keep-alive; a plain body has a Content-Length, a
stream is `Transfer-Encoding: chunked` with each SSE event (or NDJSON line) written and
flushed as its own chunk. SIGTERM or SIGINT stops it. With LLM_UPSTREAM_LOG set, every
request it reads is appended to that file as one JSON line
`{"method", "path", "headers": {lowercased name: value}, "body": <body as text>}`.

Endpoints
    POST /v1/messages               Anthropic message / SSE with `event:` lines
    POST /v1/messages/count_tokens  {"input_tokens": 42}
    POST /v1/chat/completions       chat.completion / `data:` chunks, `data: [DONE]`
    POST /v1/responses              response / typed SSE events with sequence_number
    GET  /v1/models[/ID]            OpenAI list / model
    POST /api/chat                  Ollama NDJSON stream (default) or one object
    POST /openai/deployments/D/chat/completions
                                    the chat completions API under Azure OpenAI's path
    POST /v1beta/models/M:generateContent, M:streamGenerateContent?alt=sse
                                    Gemini's API (an API reel does not read): the text
                                    scripts only, the stream in 3 `data:` events with no
                                    final marker (Gemini's streams have none)

Scripts (the request's `model`)
    reel-text    the answer "Hello from the upstream." (3+ deltas when streamed)
    reel-tool    a call of `get_weather` {"city": "Paris"}; once the last message
                 carries the tool's result, the answer "It is sunny in Paris."
    reel-think   reasoning first (Anthropic thinking block with signature, chat
                 reasoning_content and reasoning tokens, Responses reasoning item with
                 a summary, Ollama `thinking`), then the answer
    reel-leak    an answer repeating credentials (LEAK_ANSWER: an Anthropic key, a
                 SendGrid key, a Stripe key, an npm token, a Basic authorization
                 header) streamed 4 characters per delta, as a model streams a key
                 it was shown
    reel-echo    the text of the last message (a string, or its text blocks/parts)
                 as the answer, streamed 4 characters per delta: what a model does
                 with a key it was shown
    reel-big-N   N MiB of answer text in 16 KiB deltas, made as it is sent
    reel-mcp-T   (Anthropic Messages) a call of the offered tool named T or ending in
                 `__T` (an MCP tool as Claude Code names it: `mcp__SERVER__T`) with the
                 input MCP_INPUTS[T]; once the last message carries its result, the
                 answer "The tool said: <the result's text>."
Faults, as a suffix to any of them (`reel-text-429`, `reel-tool-sever`, ...)
    -sever             stream: the head and 3 events, then the socket is closed with no
                       final chunk; plain: the head and half the body, then closed
    -stall             stream: 1 event then 30 s of silence; plain: 30 s before the head
    -429               429, retry-after: 1, the provider's rate-limit error
    -529               529, the provider's overloaded error
    -500               500, the provider's server error
    -gzip              plain body gzip-compressed (content-encoding: gzip) whatever the
                       request's accept-encoding
    -slow              stream events 50 ms apart
    -midstream-error   stream: 2 events, then the provider's in-stream error, then end
How the end of a whole answer is written (no content is cut by any of them):
    -coalesce          stream: the last two events and the closing chunk in one write
    -gap               stream: 50 ms before the last event (a client that stops reading
                       at the stop reason hangs up meanwhile)
    -linger            stream: 50 ms between the last event and the closing chunk
    -closedelim        no content-length and not chunked: the body ends when the
                       connection closes (`connection: close`), stream or plain
Any other model is a 404 in the provider's error shape.

Usage is fixed: Anthropic input 11, output 7, cache read 5, cache creation 3 (the
stream gives the input side in message_start, output_tokens in message_delta); chat
prompt 20 (cached 4), completion 9 (reasoning 3 for reel-think, else 0), total 29;
Responses the same numbers; Ollama prompt_eval_count 13, eval_count 6. Ids come from a
per-process request counter (`req_1`, `msg_reel0001`, ...) and every `created` is
CREATED, so the same requests in the same order give the same bytes.
"""
import argparse
import gzip
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CREATED = 1700000000
CREATED_AT = "2023-11-14T22:13:20Z"
ANSWER = "Hello from the upstream."
TOOL_ANSWER = "It is sunny in Paris."
THINKING = "The user greets me. I should greet them back."
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
# Made-up credentials of the providers' shapes, for reel-leak.
LEAK_ANSWER = (
    "Here they are:\n"
    "sk-ant-api03-Xq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0aEoIuUeYrXq7LmN2pR9sT4vW6yZ1bC3dF5gH8jK0a"
    "EoIuUeYrXq7LmN2pR9sAA\n"
    "SG.Qw3Er5Ty7Ui9Op1As2Df4G.Hj6Kl8Zx0Cv2Bn4Mq6Wr8Ty0Ui2Op4As6Df8Gh0Jk2Lm4\n"
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
    "npm_Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5\n"
    "Authorization: Basic cmVlbDpzM2NyM3RQYXNzd29yZDQy\n"
    "Keep them safe."
)
TOOL_NAME = "get_weather"
TOOL_INPUT = {"city": "Paris"}
TOOL_ARGS = json.dumps(TOOL_INPUT)          # '{"city": "Paris"}'
TOOL_ARG_PARTS = ['{"city": ', '"Par', 'is"}']
BIG_EVENT = 16 * 1024
MIB = 1024 * 1024

ANTHROPIC_USAGE = {"input_tokens": 11, "cache_creation_input_tokens": 3,
                   "cache_read_input_tokens": 5, "output_tokens": 7}
OLLAMA_COUNTS = {"prompt_eval_count": 13, "eval_count": 6}

FAULTS = ("midstream-error", "sever", "stall", "429", "529", "500", "gzip", "slow",
          "coalesce", "gap", "linger", "closedelim")
ENDINGS = ("coalesce", "gap", "linger", "closedelim")
BASES = ("reel-text", "reel-tool", "reel-think", "reel-leak", "reel-echo")
# reel-mcp-T: the input each known MCP test tool is called with.
MCP_INPUTS = {"add": {"a": 2, "b": 3}, "shout": {"text": "hi"}, "echo": {"message": "hi"}}

_counter = 0
_counter_lock = threading.Lock()
_log_lock = threading.Lock()


def next_request_number() -> int:
    global _counter
    with _counter_lock:
        _counter += 1
        return _counter


def split_text(text: str, parts: int = 3):
    """`text` in `parts` pieces on word boundaries (every text streamed here has 3+ words)."""
    words = re.findall(r"\S+\s*", text) or [text]
    if len(words) < parts:
        step = max(1, len(text) // parts)
        return [text[i:i + step] for i in range(0, len(text), step)]
    cuts = [len(words) * i // parts for i in range(parts + 1)]
    return ["".join(words[cuts[i]:cuts[i + 1]]) for i in range(parts)]


def big_pieces(mib: float):
    """N MiB of ASCII text as 16 KiB pieces, made one at a time."""
    total = int(mib * MIB)
    line = "reel big stream filler text 0123456789 abcdefghijklmnopqrstuvwxyz.\n"
    block = (line * (BIG_EVENT // len(line) + 1))[:BIG_EVENT]
    sent = 0
    while sent < total:
        n = min(BIG_EVENT, total - sent)
        yield block[:n]
        sent += n


def parse_model(model):
    """(base, big MiB or None, fault or None), or None for a model with no script."""
    if not isinstance(model, str):
        return None
    fault = None
    for f in FAULTS:
        if model.endswith("-" + f):
            fault, model = f, model[: -len(f) - 1]
            break
    if model in BASES:
        return model, None, fault
    m = re.fullmatch(r"reel-big-(\d+(?:\.\d+)?)", model)
    if m:
        return "reel-big", float(m.group(1)), fault
    m = re.fullmatch(r"reel-mcp-(\w+)", model)
    if m and m.group(1) in MCP_INPUTS:
        return "reel-mcp", m.group(1), fault
    return None


def last_message_text(body):
    """The text of the request's last message or input item (reel-echo)."""
    items = body.get("messages") or body.get("input") or []
    if isinstance(items, str):
        return items
    last = items[-1] if items else {}
    content = last.get("content") if isinstance(last, dict) else None
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def sse(data, event=None) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


def ndjson(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


class Scenario:
    """What one request asked for: the script, the fault and the ids it uses."""

    def __init__(self, n, model, base, big, fault, tool_result):
        self.n, self.model, self.base, self.big, self.fault = n, model, base, big, fault
        self.tool_result = tool_result
        self.tool_name, self.tool_input = TOOL_NAME, TOOL_INPUT
        self.answer = None

    def use_offered_tool(self, body):
        """reel-mcp-T: the offered tool to call, and the answer once it answered."""
        wanted = self.big
        names = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
        self.tool_name = next((n for n in names if n == wanted or n.endswith("__" + wanted)),
                              wanted)
        self.tool_input = MCP_INPUTS[wanted]
        if self.tool_result:
            content = body["messages"][-1]["content"]
            result = next(b for b in content if b.get("type") == "tool_result")
            parts = result.get("content")
            text = parts if isinstance(parts, str) else "".join(
                p.get("text", "") for p in parts or [] if isinstance(p, dict))
            self.answer = f"The tool said: {text}."

    @property
    def calls_tool(self):
        return self.base in ("reel-tool", "reel-mcp") and not self.tool_result

    @property
    def thinks(self):
        return self.base == "reel-think"

    def text(self):
        if self.answer is not None:
            return self.answer
        if self.base == "reel-big":
            return "".join(big_pieces(self.big))
        if self.base == "reel-leak":
            return LEAK_ANSWER
        return TOOL_ANSWER if self.base == "reel-tool" else ANSWER

    def text_pieces(self):
        if self.base == "reel-big":
            return big_pieces(self.big)
        if self.base in ("reel-leak", "reel-echo"):
            text = self.text()
            return (text[i:i + 4] for i in range(0, len(text), 4))
        return iter(split_text(self.text()))

    def rid(self, prefix):
        return f"{prefix}reel{self.n:04d}"


# ---------------------------------------------------------------- Anthropic Messages

def anthropic_tool_result(body):
    msgs = body.get("messages") or []
    if not msgs or not isinstance(msgs[-1], dict) or msgs[-1].get("role") != "user":
        return False
    content = msgs[-1].get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def anthropic_message(sc):
    content = []
    if sc.thinks:
        content.append({"type": "thinking", "thinking": THINKING, "signature": SIGNATURE})
    if sc.calls_tool:
        content.append({"type": "tool_use", "id": sc.rid("toolu_01"), "name": sc.tool_name,
                        "input": sc.tool_input})
    else:
        content.append({"type": "text", "text": sc.text()})
    return {"id": sc.rid("msg_01"), "type": "message", "role": "assistant", "model": sc.model,
            "content": content, "stop_reason": "tool_use" if sc.calls_tool else "end_turn",
            "stop_sequence": None, "usage": dict(ANTHROPIC_USAGE)}


def anthropic_events(sc):
    usage = dict(ANTHROPIC_USAGE, output_tokens=1)
    yield sse({"type": "message_start", "message": {
        "id": sc.rid("msg_01"), "type": "message", "role": "assistant", "model": sc.model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}},
        "message_start")
    yield sse({"type": "ping"}, "ping")
    index = 0

    def block(start, deltas):
        yield sse({"type": "content_block_start", "index": index, "content_block": start},
                  "content_block_start")
        for d in deltas:
            yield sse({"type": "content_block_delta", "index": index, "delta": d},
                      "content_block_delta")
        yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")

    if sc.thinks:
        deltas = [{"type": "thinking_delta", "thinking": t} for t in split_text(THINKING)]
        deltas.append({"type": "signature_delta", "signature": SIGNATURE})
        yield from block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        index += 1
    if sc.calls_tool:
        parts = TOOL_ARG_PARTS if sc.tool_input is TOOL_INPUT else [json.dumps(sc.tool_input)]
        yield from block({"type": "tool_use", "id": sc.rid("toolu_01"), "name": sc.tool_name,
                          "input": {}},
                         [{"type": "input_json_delta", "partial_json": p} for p in parts])
    else:
        yield from block({"type": "text", "text": ""},
                         ({"type": "text_delta", "text": t} for t in sc.text_pieces()))
    yield sse({"type": "message_delta",
               "delta": {"stop_reason": "tool_use" if sc.calls_tool else "end_turn",
                         "stop_sequence": None},
               "usage": {"output_tokens": ANTHROPIC_USAGE["output_tokens"]}}, "message_delta")
    yield sse({"type": "message_stop"}, "message_stop")


ANTHROPIC_ERRORS = {
    404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def anthropic_error(status, message, rid):
    return {"type": "error", "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"),
                                       "message": message}, "request_id": rid}


# ---------------------------------------------------------------- OpenAI Chat Completions

def chat_tool_result(body):
    msgs = body.get("messages") or []
    return bool(msgs) and isinstance(msgs[-1], dict) and msgs[-1].get("role") == "tool"


def chat_usage(sc):
    return {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 3 if sc.thinks else 0,
                                          "audio_tokens": 0, "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0}}


def chat_completion(sc):
    msg = {"role": "assistant", "content": None if sc.calls_tool else sc.text(),
           "refusal": None, "annotations": []}
    if sc.thinks:
        msg["reasoning_content"] = THINKING
    if sc.calls_tool:
        msg["tool_calls"] = [{"id": sc.rid("call_"), "type": "function",
                              "function": {"name": TOOL_NAME, "arguments": TOOL_ARGS}}]
    return {"id": sc.rid("chatcmpl-"), "object": "chat.completion", "created": CREATED,
            "model": sc.model,
            "choices": [{"index": 0, "message": msg, "logprobs": None,
                         "finish_reason": "tool_calls" if sc.calls_tool else "stop"}],
            "usage": chat_usage(sc), "service_tier": "default", "system_fingerprint": "fp_reel"}


def chat_events(sc, include_usage):
    def chunk(delta, finish=None, choices=True):
        c = {"id": sc.rid("chatcmpl-"), "object": "chat.completion.chunk", "created": CREATED,
             "model": sc.model, "service_tier": "default", "system_fingerprint": "fp_reel",
             "choices": [{"index": 0, "delta": delta, "logprobs": None,
                          "finish_reason": finish}] if choices else []}
        if include_usage:
            c["usage"] = None
        return c

    yield sse(chunk({"role": "assistant", "content": None if sc.calls_tool else "",
                     "refusal": None}))
    if sc.thinks:
        for t in split_text(THINKING):
            yield sse(chunk({"reasoning_content": t}))
    if sc.calls_tool:
        yield sse(chunk({"tool_calls": [{"index": 0, "id": sc.rid("call_"), "type": "function",
                                         "function": {"name": TOOL_NAME, "arguments": ""}}]}))
        for p in TOOL_ARG_PARTS:
            yield sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}))
    else:
        for t in sc.text_pieces():
            yield sse(chunk({"content": t}))
    yield sse(chunk({}, "tool_calls" if sc.calls_tool else "stop"))
    if include_usage:
        last = chunk({}, choices=False)
        last["usage"] = chat_usage(sc)
        yield sse(last)
    yield sse("[DONE]")


OPENAI_ERRORS = {
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", None),
    529: ("overloaded_error", "overloaded"),
}


def openai_error(status, message):
    kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# ---------------------------------------------------------------- OpenAI Responses

def responses_tool_result(body):
    items = body.get("input")
    return (isinstance(items, list) and bool(items) and isinstance(items[-1], dict)
            and items[-1].get("type") == "function_call_output")


def responses_usage(sc):
    return {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 3 if sc.thinks else 0},
            "total_tokens": 29}


def responses_items(sc):
    """The finished output items, in order."""
    items = []
    if sc.thinks:
        items.append({"id": sc.rid("rs_"), "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": THINKING}]})
    if sc.calls_tool:
        items.append({"id": sc.rid("fc_"), "type": "function_call", "status": "completed",
                      "arguments": TOOL_ARGS, "call_id": sc.rid("call_"), "name": TOOL_NAME})
    else:
        items.append({"id": sc.rid("msg_"), "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "annotations": [], "logprobs": [],
                                   "text": sc.text()}]})
    return items


def responses_object(sc, body, status, output, usage):
    tools = body.get("tools")
    return {"id": sc.rid("resp_"), "object": "response", "created_at": CREATED,
            "status": status, "background": False, "error": None, "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": sc.model,
            "output": output, "parallel_tool_calls": True,
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": "medium" if sc.thinks else None,
                          "summary": "auto" if sc.thinks else None},
            "service_tier": "default", "store": True, "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto", "tools": tools if isinstance(tools, list) else [],
            "top_p": 1.0, "truncation": "disabled", "usage": usage, "user": None,
            "metadata": {}}


def responses_events(sc, body):
    seq = 0

    def ev(kind, **fields):
        nonlocal seq
        data = {"type": kind, "sequence_number": seq, **fields}
        seq += 1
        return sse(data, kind)

    yield ev("response.created", response=responses_object(sc, body, "in_progress", [], None))
    yield ev("response.in_progress", response=responses_object(sc, body, "in_progress", [], None))
    done = []
    if sc.thinks:
        oi, iid = len(done), sc.rid("rs_")
        yield ev("response.output_item.added", output_index=oi,
                 item={"id": iid, "type": "reasoning", "summary": []})
        yield ev("response.reasoning_summary_part.added", item_id=iid, output_index=oi,
                 summary_index=0, part={"type": "summary_text", "text": ""})
        for t in split_text(THINKING):
            yield ev("response.reasoning_summary_text.delta", item_id=iid, output_index=oi,
                     summary_index=0, delta=t)
        yield ev("response.reasoning_summary_text.done", item_id=iid, output_index=oi,
                 summary_index=0, text=THINKING)
        yield ev("response.reasoning_summary_part.done", item_id=iid, output_index=oi,
                 summary_index=0, part={"type": "summary_text", "text": THINKING})
        item = {"id": iid, "type": "reasoning",
                "summary": [{"type": "summary_text", "text": THINKING}]}
        yield ev("response.output_item.done", output_index=oi, item=item)
        done.append(item)
    oi = len(done)
    if sc.calls_tool:
        iid = sc.rid("fc_")
        added = {"id": iid, "type": "function_call", "status": "in_progress", "arguments": "",
                 "call_id": sc.rid("call_"), "name": TOOL_NAME}
        yield ev("response.output_item.added", output_index=oi, item=added)
        for p in TOOL_ARG_PARTS:
            yield ev("response.function_call_arguments.delta", item_id=iid, output_index=oi,
                     delta=p)
        yield ev("response.function_call_arguments.done", item_id=iid, output_index=oi,
                 arguments=TOOL_ARGS)
        item = dict(added, status="completed", arguments=TOOL_ARGS)
    else:
        iid = sc.rid("msg_")
        yield ev("response.output_item.added", output_index=oi,
                 item={"id": iid, "type": "message", "status": "in_progress",
                       "role": "assistant", "content": []})
        yield ev("response.content_part.added", item_id=iid, output_index=oi, content_index=0,
                 part={"type": "output_text", "annotations": [], "logprobs": [], "text": ""})
        for t in sc.text_pieces():
            yield ev("response.output_text.delta", item_id=iid, output_index=oi,
                     content_index=0, delta=t, logprobs=[])
        text = sc.text()
        yield ev("response.output_text.done", item_id=iid, output_index=oi, content_index=0,
                 text=text, logprobs=[])
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        yield ev("response.content_part.done", item_id=iid, output_index=oi, content_index=0,
                 part=part)
        item = {"id": iid, "type": "message", "status": "completed", "role": "assistant",
                "content": [part]}
    yield ev("response.output_item.done", output_index=oi, item=item)
    done.append(item)
    yield ev("response.completed",
             response=responses_object(sc, body, "completed", done, responses_usage(sc)))


# ---------------------------------------------------------------- Ollama chat

def ollama_message(sc, content):
    return {"model": sc.model, "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": content}, "done": False}


def ollama_final(sc):
    return {"model": sc.model, "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": "stop", "total_duration": 5000000, "load_duration": 1000000,
            "prompt_eval_count": OLLAMA_COUNTS["prompt_eval_count"],
            "prompt_eval_duration": 1000000,
            "eval_count": OLLAMA_COUNTS["eval_count"], "eval_duration": 3000000}


def ollama_tool_calls():
    return [{"function": {"name": TOOL_NAME, "arguments": TOOL_INPUT}}]


def ollama_object(sc):
    out = ollama_final(sc)
    out["message"] = {"role": "assistant", "content": "" if sc.calls_tool else sc.text()}
    if sc.thinks:
        out["message"]["thinking"] = THINKING
    if sc.calls_tool:
        out["message"]["tool_calls"] = ollama_tool_calls()
    return out


def ollama_events(sc):
    if sc.thinks:
        for t in split_text(THINKING):
            line = ollama_message(sc, "")
            line["message"]["thinking"] = t
            yield ndjson(line)
    if sc.calls_tool:
        line = ollama_message(sc, "")
        line["message"]["tool_calls"] = ollama_tool_calls()
        yield ndjson(line)
    else:
        for t in sc.text_pieces():
            yield ndjson(ollama_message(sc, t))
    yield ndjson(ollama_final(sc))


# ---------------------------------------------------------------- the server

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "llm-upstream"

    def log_message(self, *args):
        pass

    # -- request side

    def read_body(self) -> bytes:
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or "0"))

    def log_request_seen(self, body: bytes):
        path = os.environ.get("LLM_UPSTREAM_LOG")
        if not path:
            return
        headers = {}
        for name, value in self.headers.items():
            k = name.lower()
            headers[k] = f"{headers[k]}, {value}" if k in headers else value
        line = json.dumps({"method": self.command, "path": self.path, "headers": headers,
                           "body": body.decode("utf-8", "replace")})
        with _log_lock, open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    # -- response side

    def head(self, status, ctype, headers, length=None, chunked=False):
        self.send_response(status)
        self.send_header("content-type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        elif length is None:
            self.send_header("connection", "close")
            self.close_connection = True
        else:
            self.send_header("content-length", str(length))
        self.end_headers()

    def close_delimited(self, ctype, headers, parts):
        """The body's end is the connection's close (no length, not chunked)."""
        self.head(200, ctype, headers)
        for part in parts:
            self.wfile.write(part)
            self.wfile.flush()
        self.sever()

    def chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def sever(self):
        """Close the connection now, mid-body, with no TLS close_notify."""
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_json(self, status, obj, headers, fault=None):
        body = json.dumps(obj).encode()
        headers = list(headers)
        if fault == "gzip":
            body = gzip.compress(body, mtime=0)
            headers.append(("content-encoding", "gzip"))
        if fault == "stall":
            time.sleep(30)
        if fault == "closedelim" and status < 400:
            return self.close_delimited("application/json", headers, [body])
        self.head(status, "application/json", headers, len(body))
        if fault == "sever":
            self.wfile.write(body[: len(body) // 2])
            self.sever()
            return
        self.wfile.write(body)

    def send_stream(self, ctype, headers, events, fault, error_event):
        if fault == "closedelim":
            return self.close_delimited(ctype, headers, events)
        if fault in ENDINGS:
            return self.send_stream_ending(ctype, headers, list(events), fault)
        self.head(200, ctype, headers, chunked=True)
        for i, event in enumerate(events):
            if fault == "sever" and i == 3:
                self.sever()
                return
            if fault == "midstream-error" and i == 2:
                self.chunk(error_event(i))
                break
            if fault == "slow" and i > 0:
                time.sleep(0.05)
            self.chunk(event)
            if fault == "stall" and i == 0:
                time.sleep(30)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def send_stream_ending(self, ctype, headers, events, fault):
        """A whole stream whose last writes are framed as `fault` says."""
        self.head(200, ctype, headers, chunked=True)
        try:
            self.write_ending(events, fault)
        except OSError:
            self.close_connection = True  # the client hung up after the answer's end

    def write_ending(self, events, fault):
        last = b"0\r\n\r\n"
        if fault == "coalesce":
            tail = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events[-2:])
            for event in events[:-2]:
                self.chunk(event)
            self.wfile.write(tail + last)
        else:
            for event in events[:-1]:
                self.chunk(event)
            if fault == "gap":
                time.sleep(0.05)
            self.chunk(events[-1])
            if fault == "linger":
                time.sleep(0.05)
            self.wfile.write(last)
        self.wfile.flush()

    # -- routing

    def do_GET(self):
        self.log_request_seen(b"")
        n = next_request_number()
        headers = [("x-request-id", f"req_{n}"), ("openai-processing-ms", "1")]
        path = self.path.split("?")[0]
        if path == "/v1/models":
            models = list(BASES) + ["reel-big-1"]
            self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": CREATED, "owned_by": "reel"}
                for m in models]}, headers)
        elif path.startswith("/v1/models/") and parse_model(path[len("/v1/models/"):]):
            self.send_json(200, {"id": path[len("/v1/models/"):], "object": "model",
                                 "created": CREATED, "owned_by": "reel"}, headers)
        else:
            self.send_json(404, openai_error(404, f"no such path: {path}"), headers)

    def do_POST(self):
        raw = self.read_body()
        self.log_request_seen(raw)
        n = next_request_number()
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            body = None
        if path in ("/v1/messages", "/v1/messages/count_tokens"):
            self.anthropic(n, path, body)
        elif path in ("/v1/chat/completions", "/v1/responses"):
            self.openai(n, path, body)
        elif re.fullmatch(r"/openai/deployments/[^/]+/chat/completions", path):
            self.openai(n, "/v1/chat/completions", body)
        elif re.fullmatch(r"/v1beta/models/[^/:]+:(stream)?[gG]enerateContent", path):
            self.gemini(n, path, body)
        elif path == "/api/chat":
            self.ollama(n, body)
        else:
            self.send_json(404, openai_error(404, f"no such path: {path}"),
                           [("x-request-id", f"req_{n}")])

    def scenario(self, n, body, tool_result):
        model = body.get("model") if body else None
        parsed = parse_model(model)
        if parsed is None:
            return None
        base, big, fault = parsed
        sc = Scenario(n, model, base, big, fault, tool_result(body))
        if base == "reel-echo":
            sc.answer = last_message_text(body)
        return sc

    def status_fault(self, sc):
        return {"429": 429, "529": 529, "500": 500}.get(sc.fault)

    def anthropic(self, n, path, body):
        rid = f"req_{n}"
        headers = [("request-id", rid), ("anthropic-ratelimit-requests-remaining", "99")]
        if body is None:
            return self.send_json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "body is not a JSON object"},
                "request_id": rid}, headers)
        sc = self.scenario(n, body, anthropic_tool_result)
        if sc is None:
            return self.send_json(404, anthropic_error(404, f"model: {body.get('model')}", rid),
                                  headers)
        if sc.base == "reel-mcp":
            sc.use_offered_tool(body)
        status = self.status_fault(sc)
        if status:
            messages = {429: "Number of requests has exceeded your rate limit.",
                        529: "Overloaded", 500: "Internal server error"}
            if status == 429:
                headers = headers + [("retry-after", "1")]
            return self.send_json(status, anthropic_error(status, messages[status], rid),
                                  headers)
        if path.endswith("/count_tokens"):
            return self.send_json(200, {"input_tokens": 42}, headers, sc.fault)
        if body.get("stream") is True:
            err = sse(anthropic_error(529, "Overloaded", rid), "error")
            return self.send_stream("text/event-stream; charset=utf-8",
                                    headers + [("cache-control", "no-cache")],
                                    anthropic_events(sc), sc.fault, lambda i: err)
        self.send_json(200, anthropic_message(sc), headers, sc.fault)

    def openai(self, n, path, body):
        headers = [("x-request-id", f"req_{n}"), ("openai-processing-ms", "1"),
                   ("x-ratelimit-remaining-requests", "99")]
        if body is None:
            return self.send_json(400, openai_error(400, "body is not a JSON object"), headers)
        chat = path == "/v1/chat/completions"
        sc = self.scenario(n, body, chat_tool_result if chat else responses_tool_result)
        if sc is None:
            return self.send_json(404, openai_error(
                404, f"The model `{body.get('model')}` does not exist or you do not have "
                     "access to it."), headers)
        status = self.status_fault(sc)
        if status:
            messages = {429: "Rate limit reached for requests.", 529: "The engine is overloaded.",
                        500: "The server had an error while processing your request."}
            if status == 429:
                headers = headers + [("retry-after", "1")]
            return self.send_json(status, openai_error(status, messages[status]), headers)
        stream = body.get("stream") is True
        if chat and stream:
            opts = body.get("stream_options")
            include_usage = isinstance(opts, dict) and opts.get("include_usage") is True
            err = sse(openai_error(500, "The server had an error while processing your request."))
            return self.send_stream("text/event-stream; charset=utf-8", headers,
                                    chat_events(sc, include_usage), sc.fault, lambda i: err)
        if chat:
            return self.send_json(200, chat_completion(sc), headers, sc.fault)
        if stream:
            def err(i):
                return sse({"type": "error", "code": "server_error",
                            "message": "The server had an error while processing your request.",
                            "param": None, "sequence_number": i}, "error")
            return self.send_stream("text/event-stream; charset=utf-8", headers,
                                    responses_events(sc, body), sc.fault, err)
        self.send_json(200, responses_object(sc, body, "completed", responses_items(sc),
                                             responses_usage(sc)), headers, sc.fault)

    def gemini(self, n, path, body):
        headers = [("x-request-id", f"req_{n}")]
        model = path[len("/v1beta/models/"):].split(":")[0]
        sc = parse_model(model)
        if body is None or sc is None:
            return self.send_json(404, {"error": {"code": 404, "message": f"model {model}",
                                                  "status": "NOT_FOUND"}}, headers)
        usage = {"promptTokenCount": 8, "candidatesTokenCount": 5, "totalTokenCount": 13}

        def chunk(text, last):
            c = {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                                 "index": 0}],
                 "usageMetadata": usage, "modelVersion": model, "responseId": f"gem{n}"}
            if last:
                c["candidates"][0]["finishReason"] = "STOP"
            return c
        if ":stream" in path:
            pieces = split_text(ANSWER)
            events = [sse(chunk(p, i == len(pieces) - 1)) for i, p in enumerate(pieces)]
            return self.send_stream("text/event-stream", headers, events, sc[2], None)
        self.send_json(200, chunk(ANSWER, True), headers, sc[2])

    def ollama(self, n, body):
        headers = []
        if body is None:
            return self.send_json(400, {"error": "body is not a JSON object"}, headers)
        sc = self.scenario(n, body, chat_tool_result)
        if sc is None:
            return self.send_json(404, {"error": f"model \"{body.get('model')}\" not found, "
                                                 "try pulling it first"}, headers)
        status = self.status_fault(sc)
        if status:
            if status == 429:
                headers = [("retry-after", "1")]
            return self.send_json(status, {"error": {429: "rate limit exceeded",
                                                     529: "server overloaded",
                                                     500: "internal server error"}[status]},
                                  headers)
        if body.get("stream", True) is not False:
            err = ndjson({"error": "server overloaded"})
            return self.send_stream("application/x-ndjson", headers, ollama_events(sc),
                                    sc.fault, lambda i: err)
        self.send_json(200, ollama_object(sc), headers, sc.fault)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def main() -> int:
    ap = argparse.ArgumentParser(description="scripted model API for reel's tests")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    scheme = "http"
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        scheme = "https"

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on {scheme}://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
