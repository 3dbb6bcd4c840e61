#!/usr/bin/env python3
"""A small agent for the offline agent test: its model is an Anthropic Messages API (the
official `anthropic` SDK, base URL from ANTHROPIC_BASE_URL) and its tools come from an MCP
server over stdio (the Python `mcp` SDK 2.3 `Client`).

    python llm_agent.py -- MCP_SERVER_CMD [ARGS...]

It lists the server's tools, offers the `weather` tool to the model (as `get_weather`,
the name the scripted models of the tests call), runs the model's tool call on the MCP
server, sends the result back and prints one JSON line: {"tool_result", "answer"}.
Exits 3 with {"error": ...} when a model call or a tool call fails.
"""
import json
import sys

import anyio
from anthropic import Anthropic
from mcp import Client
from mcp.client.stdio import StdioServerParameters

KEY = "sk-ant-api03-reel-agent-test-key-0000000000000000000000000000000000000000"


async def main(cmd):
    server = StdioServerParameters(command=cmd[0], args=cmd[1:])
    model = Anthropic(api_key=KEY, max_retries=0, timeout=30)
    async with Client(server) as mcp:
        tools = (await mcp.list_tools()).tools
        weather = next(t for t in tools if t.name == "weather")
        offered = [{
            "name": "get_weather",
            "description": weather.description or "",
            "input_schema": weather.input_schema,
        }]
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        first = model.messages.create(model="reel-tool", max_tokens=256, tools=offered,
                                      messages=messages)
        call = next(b for b in first.content if b.type == "tool_use")
        result = await mcp.call_tool("weather", call.input)
        text = "".join(c.text for c in result.content if c.type == "text")
        messages += [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": text}]},
        ]
        final = model.messages.create(model="reel-tool", max_tokens=256, tools=offered,
                                      messages=messages)
        answer = "".join(b.text for b in final.content if b.type == "text")
        print(json.dumps({"tool_result": text, "answer": answer}), flush=True)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    try:
        anyio.run(main, argv)
    except Exception as e:  # the test reads the class and message
        print(json.dumps({"error": {"class": type(e).__name__, "message": str(e)}}), flush=True)
        sys.exit(3)
