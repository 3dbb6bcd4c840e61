#!/usr/bin/env python3
"""reel's `reel llm` test client, on the official `anthropic` and `openai` Python SDKs.

    python llm_client.py --api anthropic|chat|responses --mode stream|plain \
        --scenario text|tool|think [--model M] [--prompt TEXT] [--raw-out FILE]
    python llm_client.py --batch FILE      (one such command line a line)

Base URLs come from where the SDKs read them themselves: `ANTHROPIC_BASE_URL` (no
`/v1`: the SDK appends `/v1/messages`) and `OPENAI_BASE_URL` (with `/v1`: the SDK
appends `/chat/completions` or `/responses`). Keys from `ANTHROPIC_API_KEY` and
`OPENAI_API_KEY`, or a fixed fake key. No retries, a 30 s timeout.

Prints ONE JSON line on stdout:

    {"result": <the SDK's final object, model_dump(mode="json")>, "usage": <its usage>,
     "text": <the answer text>, "tool_calls": [{"name", "input"}...],
     "thinking": <thinking/reasoning text, "" if none>, "rounds": 1|2}

- `text`: one user message, a plain answer.
- `tool`: two rounds. The request offers `get_weather` ({city: string}); when the model
  calls it, the result "sunny, 21 C" goes back and the FINAL round is printed.
- `think`: Anthropic extended thinking (budget 1024, max_tokens 2048); OpenAI
  `reasoning_effort` (chat) or `reasoning` (responses).

Streaming: Anthropic `messages.stream()` -> `get_final_message()`; chat `stream=True`
with `include_usage`, the chunks folded into one `ChatCompletion`; responses
`stream=True`, the `response.completed` event's response.

On any exception from the SDK (or from the HTTP stack under it, which some SDKs let
through on a severed stream) prints `{"error": {"class", "status", "message"}}` and
exits 3. `--raw-out FILE` also writes the response bodies as received off the socket
(after HTTP/1.1 chunked framing, before any content decoding), every round's body one
after the other, so a direct run and a run through reel can be compared byte for byte.
`--prompt` replaces the scenario's first user message. `--batch FILE` runs every line
of FILE (one command line each) in this one process and prints a line per case.
"""
import argparse
import json
import os
import sys

FAKE_KEY = "sk-test-reel-0000000000000000"
WEATHER = "What is the weather in Paris?"
TOOL_RESULT = "sunny, 21 C"
TEXT_PROMPT = "Say hello."
THINK_PROMPT = "What is 17 * 23? Think it through."
TIMEOUT = 30.0


def http_client(httpx, raw_out):
    """An HTTP client for an SDK (`httpx` is the module the SDK is built on: `httpx2`
    for both openai 3.x and anthropic 2.x) whose transport copies every response body to
    `raw_out` as it passes, unchanged; None (the SDK's own client) without `--raw-out`."""
    if raw_out is None:
        return None

    class TeeStream(httpx.SyncByteStream):
        def __init__(self, inner):
            self.inner = inner

        def __iter__(self):
            for chunk in self.inner:
                raw_out.write(chunk)
                raw_out.flush()
                yield chunk

        def close(self):
            self.inner.close()

    class TeeTransport(httpx.BaseTransport):
        def __init__(self):
            self.inner = httpx.HTTPTransport()

        def handle_request(self, request):
            response = self.inner.handle_request(request)
            response.stream = TeeStream(response.stream)
            return response

        def close(self):
            self.inner.close()

    return httpx.Client(transport=TeeTransport(), timeout=TIMEOUT)


def dump(obj):
    if obj is None:
        return None
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return obj


PROMPT = None


def prompt_for(scenario):
    if PROMPT is not None:
        return PROMPT
    return {"text": TEXT_PROMPT, "tool": WEATHER, "think": THINK_PROMPT}[scenario]


# --- Anthropic Messages ------------------------------------------------------------


def run_anthropic(args, raw_out):
    import anthropic
    import httpx2

    kwargs = {"max_retries": 0, "timeout": TIMEOUT}
    if not os.environ.get("ANTHROPIC_API_KEY") and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
        kwargs["api_key"] = FAKE_KEY
    client = anthropic.Anthropic(http_client=http_client(httpx2, raw_out), **kwargs)
    tools = [
        {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
    messages = [{"role": "user", "content": prompt_for(args.scenario)}]
    extra = {}
    max_tokens = 1024
    if args.scenario == "tool":
        extra["tools"] = tools
    if args.scenario == "think":
        extra["thinking"] = {"type": "enabled", "budget_tokens": 1024}
        max_tokens = 2048

    def call():
        params = dict(model=args.model, max_tokens=max_tokens, messages=messages, **extra)
        if args.mode == "stream":
            with client.messages.stream(**params) as stream:
                return stream.get_final_message()
        return client.messages.create(**params)

    message = call()
    rounds = 1
    uses = [b for b in message.content if b.type == "tool_use"]
    if args.scenario == "tool" and uses:
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]}
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u.id, "content": TOOL_RESULT} for u in uses
                ],
            }
        )
        message = call()
        rounds = 2
    return {
        "result": dump(message),
        "usage": dump(message.usage),
        "text": "".join(b.text for b in message.content if b.type == "text"),
        "tool_calls": [
            {"name": b.name, "input": b.input} for b in message.content if b.type == "tool_use"
        ],
        "thinking": "".join(b.thinking for b in message.content if b.type == "thinking"),
        "rounds": rounds,
    }


# --- OpenAI ----------------------------------------------------------------------


def openai_client(raw_out):
    import httpx2
    import openai

    kwargs = {"max_retries": 0, "timeout": TIMEOUT}
    if not os.environ.get("OPENAI_API_KEY"):
        kwargs["api_key"] = FAKE_KEY
    return openai.OpenAI(http_client=http_client(httpx2, raw_out), **kwargs)


WEATHER_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def fold_chat_chunks(stream):
    """The chunks of a streamed chat completion, as the one `ChatCompletion` they make."""
    from openai.types.chat import ChatCompletion

    out = {"id": "", "object": "chat.completion", "created": 0, "model": "", "choices": []}
    choices = {}
    usage = None
    for chunk in stream:
        out["id"] = chunk.id or out["id"]
        out["created"] = chunk.created or out["created"]
        out["model"] = chunk.model or out["model"]
        if getattr(chunk, "system_fingerprint", None):
            out["system_fingerprint"] = chunk.system_fingerprint
        if chunk.usage is not None:
            usage = chunk.usage.model_dump(mode="json")
        for c in chunk.choices:
            ch = choices.setdefault(
                c.index,
                {"index": c.index, "finish_reason": None, "content": None, "reasoning": None, "calls": {}},
            )
            d = c.delta
            if d is not None:
                if d.content:
                    ch["content"] = (ch["content"] or "") + d.content
                extra = d.model_extra or {}
                for key in ("reasoning_content", "reasoning"):
                    if isinstance(extra.get(key), str):
                        ch["reasoning"] = (ch["reasoning"] or "") + extra[key]
                for tc in d.tool_calls or []:
                    call = ch["calls"].setdefault(
                        tc.index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                    )
                    if tc.id:
                        call["id"] = tc.id
                    if tc.function is not None:
                        if tc.function.name:
                            call["function"]["name"] += tc.function.name
                        if tc.function.arguments:
                            call["function"]["arguments"] += tc.function.arguments
            if c.finish_reason:
                ch["finish_reason"] = c.finish_reason
    for index in sorted(choices):
        ch = choices[index]
        message = {"role": "assistant", "content": ch["content"]}
        if ch["reasoning"] is not None:
            message["reasoning_content"] = ch["reasoning"]
        if ch["calls"]:
            message["tool_calls"] = [ch["calls"][i] for i in sorted(ch["calls"])]
        out["choices"].append(
            {"index": index, "message": message, "finish_reason": ch["finish_reason"] or "stop"}
        )
    if usage is not None:
        out["usage"] = usage
    return ChatCompletion.model_validate(out)


def run_chat(args, raw_out):
    client = openai_client(raw_out)
    messages = [{"role": "user", "content": prompt_for(args.scenario)}]
    extra = {}
    if args.scenario == "tool":
        extra["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Get the current weather for a city.",
                    "parameters": WEATHER_PARAMS,
                },
            }
        ]
    if args.scenario == "think":
        extra["reasoning_effort"] = "low"

    def call():
        if args.mode == "stream":
            stream = client.chat.completions.create(
                model=args.model,
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
            return fold_chat_chunks(stream)
        return client.chat.completions.create(model=args.model, messages=messages, **extra)

    completion = call()
    rounds = 1
    calls = completion.choices[0].message.tool_calls if completion.choices else None
    if args.scenario == "tool" and calls:
        messages.append(
            {
                "role": "assistant",
                "content": completion.choices[0].message.content,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                ],
            }
        )
        for c in calls:
            messages.append({"role": "tool", "tool_call_id": c.id, "content": TOOL_RESULT})
        completion = call()
        rounds = 2
    message = completion.choices[0].message if completion.choices else None
    extra_fields = (message.model_extra or {}) if message is not None else {}
    thinking = extra_fields.get("reasoning_content") or extra_fields.get("reasoning") or ""
    return {
        "result": dump(completion),
        "usage": dump(completion.usage),
        "text": (message.content or "") if message is not None else "",
        "tool_calls": [
            {"name": c.function.name, "input": parse_json(c.function.arguments)}
            for c in ((message.tool_calls or []) if message is not None else [])
        ],
        "thinking": thinking if isinstance(thinking, str) else "",
        "rounds": rounds,
    }


def parse_json(text):
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


def run_responses(args, raw_out):
    client = openai_client(raw_out)
    items = [{"role": "user", "content": prompt_for(args.scenario)}]
    extra = {}
    if args.scenario == "tool":
        extra["tools"] = [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Get the current weather for a city.",
                "parameters": WEATHER_PARAMS,
            }
        ]
    if args.scenario == "think":
        extra["reasoning"] = {"effort": "low", "summary": "auto"}

    def call():
        if args.mode == "stream":
            final = None
            for event in client.responses.create(model=args.model, input=items, stream=True, **extra):
                if event.type == "response.completed":
                    final = event.response
            if final is None:
                raise RuntimeError("the stream ended without a response.completed event")
            return final
        return client.responses.create(model=args.model, input=items, **extra)

    response = call()
    rounds = 1
    calls = [o for o in response.output if o.type == "function_call"]
    if args.scenario == "tool" and calls:
        for c in calls:
            items.append(c.model_dump(exclude_none=True))
            items.append({"type": "function_call_output", "call_id": c.call_id, "output": TOOL_RESULT})
        response = call()
        rounds = 2
    thinking = ""
    for o in response.output:
        if o.type == "reasoning":
            thinking += "".join(s.text for s in (o.summary or []))
            thinking += "".join(c.text for c in (getattr(o, "content", None) or []) if hasattr(c, "text"))
    return {
        "result": dump(response),
        "usage": dump(response.usage),
        "text": response.output_text,
        "tool_calls": [
            {"name": o.name, "input": parse_json(o.arguments)}
            for o in response.output
            if o.type == "function_call"
        ],
        "thinking": thinking,
        "rounds": rounds,
    }


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--api", choices=["anthropic", "chat", "responses"], required=True)
    p.add_argument("--mode", choices=["stream", "plain"], required=True)
    p.add_argument("--scenario", choices=["text", "tool", "think"], required=True)
    p.add_argument("--model")
    p.add_argument("--prompt")
    p.add_argument("--raw-out")
    return p


def run_case(args):
    """One case: (exit status, its output line)."""
    global PROMPT
    PROMPT = args.prompt
    args.model = args.model or f"reel-{args.scenario}"
    raw_out = open(args.raw_out, "wb") if args.raw_out else None
    run = {"anthropic": run_anthropic, "chat": run_chat, "responses": run_responses}[args.api]
    try:
        out = run(args, raw_out)
    except Exception as e:  # noqa: BLE001 - every failure is reported the same way
        status = getattr(e, "status_code", None)
        err = {"class": type(e).__name__, "status": status, "message": str(e)}
        return 3, json.dumps({"error": err}, ensure_ascii=False)
    finally:
        if raw_out is not None:
            raw_out.close()
    return 0, json.dumps(out, ensure_ascii=False)


def main():
    # `--batch FILE`: every line of FILE is one case's command line (the flags above,
    # shell-quoted), run in turn in this process, one output line each; exit 3 when any
    # case failed.
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        import shlex

        worst = 0
        with open(sys.argv[2]) as f:
            for line in f:
                if line.strip():
                    code, out = run_case(parser().parse_args(shlex.split(line)))
                    worst = max(worst, code)
                    print(out, flush=True)
        sys.exit(worst)
    code, out = run_case(parser().parse_args())
    print(out, flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
