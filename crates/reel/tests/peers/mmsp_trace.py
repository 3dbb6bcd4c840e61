"""MMSP traces written by the real `mmsp` package, and MMSP's own viewer reading any.

`write CACHE`: a ScriptedClient subclasses the real `LLMClient`, so the package's own path
runs (provider deltas -> `StreamItems` -> stop event -> `Tracer.save_history` before the
stop is yielded). It saves, under `MMSP_CACHE_DIR=CACHE`:
  - `agent/conv`: a stateful three-turn conversation (CJK text, signed thinking, a streamed
    tool call, its result, usage merged from two stop events);
  - `media/pic`: a stateless call with an image URL, inline image bytes, inline thinking
    and an audio answer;
  - `legacy/old.json`: a trace in the shape written before 0.5.0 (item types without
    `.done`, a stray `partial_tool_call`, no `created_at`, no usage), written as that
    version wrote it.
It prints, as JSON, what it expects reel to read: the usage summed over assistant turns.

`view CACHE PATH…`: GETs each path from `Tracer(cache_dir=CACHE).create_web_app()` with
Flask's test client and prints `{path: {"status": n, "body": text}}` as JSON.
"""

import asyncio
import json
import os
import sys
import warnings


def scripted_client():
    from mmsp.base_client import LLMClient

    class ScriptedClient(LLMClient):
        """Plays back a list of provider event lists, one list per call."""

        def __init__(self, model, script):
            self._model = model
            self._history = []
            self._script = list(script)

        def transform_uni_config_to_model_config(self, config):
            return config

        def transform_uni_message_to_model_input(self, messages):
            return messages

        def transform_model_output_to_uni_event(self, model_output):
            return model_output

        async def list_models(self):
            return [self._model]

        async def _streaming_response_internal(self, messages, config):
            for event in self._script.pop(0):
                yield event

    return ScriptedClient


def delta(item):
    return {
        "role": "assistant",
        "event_type": "delta",
        "content_items": [item],
        "usage_metadata": None,
        "finish_reason": None,
    }


def stop(usage, finish):
    return {
        "role": "assistant",
        "event_type": "stop",
        "content_items": [],
        "usage_metadata": usage,
        "finish_reason": finish,
    }


def usage(cached, prompt, thoughts, response):
    return {
        "cached_tokens": cached,
        "prompt_tokens": prompt,
        "thoughts_tokens": thoughts,
        "response_tokens": response,
    }


TOOLS = [
    {
        "name": "get_weather",
        "description": "Get the weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
]

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c4944415478da63f8cfc00000030101009cfe92ef0000000049454e44ae426082"
)

LEGACY = {
    "history": [
        {"role": "user", "content_items": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content_items": [
                {"type": "thinking", "thinking": "Look it up."},
                {
                    "type": "partial_tool_call",
                    "name": "get_weather",
                    "arguments": '{"city": "Paris"}',
                    "tool_call_id": "call_1",
                },
                {
                    "type": "tool_call",
                    "name": "get_weather",
                    "arguments": {"city": "Paris"},
                    "tool_call_id": "call_1",
                },
            ],
        },
        {
            "role": "user",
            "content_items": [{"type": "tool_result", "text": "22 C", "tool_call_id": "call_1"}],
        },
    ],
    "config": {"model": "fake-model"},
    "timestamp": "2026-01-01T00:00:00",
}


async def drain(stream):
    async for _ in stream:
        pass


async def write(cache):
    os.environ["MMSP_CACHE_DIR"] = cache
    Client = scripted_client()
    script = [
        [
            delta({"type": "thinking.delta", "thinking": "用户打招呼，", "fidelity": {"item_id": "0"}}),
            delta({"type": "thinking.delta", "thinking": "我用中文回答。", "fidelity": {"item_id": "0"}}),
            delta({"type": "thinking.delta", "thinking": "", "fidelity": {"item_id": "0", "signature": "sig-1"}}),
            delta({"type": "text.delta", "text": "你好！", "fidelity": {"item_id": "1"}}),
            delta({"type": "text.delta", "text": "有什么可以帮你？", "fidelity": {"item_id": "1"}}),
            stop(usage(0, 31, None, None), None),
            stop(usage(None, None, 12, 9), "stop"),
        ],
        [
            delta({"type": "text.delta", "text": "Let me check.", "fidelity": {"item_id": "0"}}),
            delta(
                {
                    "type": "tool_call.delta",
                    "name": "get_weather",
                    "arguments": '{"city": ',
                    "tool_call_id": "toolu_01",
                    "fidelity": {"item_id": "1"},
                }
            ),
            delta(
                {
                    "type": "tool_call.delta",
                    "name": "",
                    "arguments": '"Paris"}',
                    "tool_call_id": "",
                    "fidelity": {"item_id": "1"},
                }
            ),
            stop(usage(24, 40, None, 30), "tool_call"),
        ],
        [
            delta({"type": "text.delta", "text": "It is 22 °C and sunny.", "fidelity": {"item_id": "0"}}),
            stop(usage(64, 20, 0, 12), "stop"),
        ],
    ]
    client = Client("fake-claude", script)
    config = {
        "system_prompt": "You are a helpful assistant.",
        "temperature": 0.7,
        "max_tokens": 1024,
        "tools": TOOLS,
        "tool_choice": "auto",
        "trace_id": "agent/conv",
    }
    for message in [
        {"role": "user", "content_items": [{"type": "text.done", "text": "你好，MMSP"}]},
        {"role": "user", "content_items": [{"type": "text.done", "text": "What's the weather in Paris?"}]},
        {
            "role": "user",
            "content_items": [
                {"type": "tool_result.done", "text": '{"temp": 22, "sky": "sunny"}', "tool_call_id": "toolu_01"}
            ],
        },
    ]:
        await drain(client.streaming_response_stateful(message, config))

    media = Client(
        "fake-gemini-image",
        [
            [
                delta({"type": "inline_thinking.delta", "data": PIXEL, "mime_type": "image/png",
                       "fidelity": {"item_id": "0", "signature": "gem-sig"}}),
                delta({"type": "text.delta", "text": "A red pixel.", "fidelity": {"item_id": "1"}}),
                delta({"type": "inline_data.delta", "data": b"\x00\x01\x02\x03", "mime_type": "audio/pcm",
                       "fidelity": {"item_id": "2"}}),
                delta({"type": "inline_data.delta", "data": b"\x04\x05\x06\x07", "mime_type": "audio/pcm",
                       "fidelity": {"item_id": "2"}}),
                stop(usage(None, 300, 50, 1290), "stop"),
            ]
        ],
    )
    messages = [
        {
            "role": "user",
            "content_items": [
                {"type": "text.done", "text": "Say what this shows."},
                {"type": "image_url.done", "image_url": "https://example.com/cat.png"},
                {"type": "inline_data.done", "data": PIXEL, "mime_type": "image/png"},
            ],
        }
    ]
    await drain(media.streaming_response(messages, {"trace_id": "media/pic", "image_config": {"aspect_ratio": "1:1"}}))

    os.makedirs(os.path.join(cache, "legacy"), exist_ok=True)
    with open(os.path.join(cache, "legacy", "old.json"), "w", encoding="utf-8") as f:
        json.dump(LEGACY, f)

    print(json.dumps({
        "agent/conv": {"input": 31 + 40 + 20, "cache_read": 0 + 24 + 64, "output": 21 + 30 + 12, "thinking": 12 + 0},
        "media/pic": {"input": 300, "output": 1340, "thinking": 50},
    }))


def view(cache, paths):
    from mmsp.integration.tracer import Tracer

    app = Tracer(cache_dir=cache).create_web_app()
    out = {}
    with app.test_client() as c:
        for p in paths:
            r = c.get(p)
            out[p] = {"status": r.status_code, "body": r.get_data(as_text=True)}
    print(json.dumps(out, ensure_ascii=False))


def main():
    warnings.simplefilter("ignore")
    cmd, cache, *rest = sys.argv[1:]
    if cmd == "write":
        asyncio.run(write(cache))
    elif cmd == "view":
        view(cache, rest)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
