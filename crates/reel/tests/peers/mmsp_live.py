"""A real MMSP client (mmsp's AnthropicOfficialClient) talking to a model API at
ANTHROPIC_BASE_URL, which `reel llm` sets for the command it runs. It saves its own
trace, as MMSP does, under MMSP_CACHE_DIR.

    python mmsp_live.py [--sever] [--named ID] [--named-refused ID]

Runs a stateful two-round tool conversation (trace id `weather`) against the scripted
upstream's `reel-tool` model: the question, the model's `get_weather` call, the tool's
result, the answer. With --sever it then makes one call whose stream the upstream cuts
(`reel-text-sever`, trace id `cut`): MMSP saves nothing for it, and neither may reel.
With --named ID, a last one-round call (`reel-text`, trace id `named`) carries the header
`x-mmsp-trace-id: ID`, which names reel's trace id for it; --named-refused ID makes one
more such call whose id reel must refuse.
Prints one JSON line per round: the finish reason and the usage MMSP saw.
"""

import asyncio
import json
import sys
import warnings

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


async def rounds(client, messages, config):
    for message in messages:
        stop = None
        async for event in client.streaming_response_stateful(message, config):
            if event.get("event_type") == "stop":
                stop = event
        print(
            json.dumps(
                {
                    "finish_reason": stop and stop["finish_reason"],
                    "usage": stop and stop["usage_metadata"],
                }
            ),
            flush=True,
        )


async def main(sever, named, refused):
    from mmsp.anthropic_official.client import AnthropicOfficialClient

    client = AnthropicOfficialClient(model="reel-tool", api_key="sk-ant-api03-test-key")
    config = {"trace_id": "weather", "system_prompt": "Answer briefly.", "tools": TOOLS}
    question = {"role": "user", "content_items": [{"type": "text", "text": "What's the weather in Paris?"}]}
    await rounds(client, [question], config)
    call = next(
        item
        for item in client._history[-1]["content_items"]
        if item["type"] == "tool_call.done"
    )
    result = {
        "role": "user",
        "content_items": [
            {"type": "tool_result.done", "text": "22 C, sunny", "tool_call_id": call["tool_call_id"]}
        ],
    }
    await rounds(client, [result], config)
    if sever:
        cut = AnthropicOfficialClient(model="reel-text-sever", api_key="sk-ant-api03-test-key")
        try:
            await rounds(cut, [question], {"trace_id": "cut"})
        except Exception as e:  # the cut stream surfaces as the SDK's error
            print(json.dumps({"error": type(e).__name__}), flush=True)
    if named:
        one = AnthropicOfficialClient(
            model="reel-text",
            api_key="sk-ant-api03-test-key",
            default_headers={"x-mmsp-trace-id": named},
        )
        await rounds(one, [question], {"trace_id": "named"})
    if refused:
        bad = AnthropicOfficialClient(
            model="reel-text",
            api_key="sk-ant-api03-test-key",
            default_headers={"x-mmsp-trace-id": refused},
        )
        await rounds(bad, [question], {})


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    args = sys.argv[1:]
    def value(flag):
        return args[args.index(flag) + 1] if flag in args else None

    asyncio.run(main("--sever" in args, value("--named"), value("--named-refused")))
