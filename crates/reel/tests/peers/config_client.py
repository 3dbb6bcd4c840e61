#!/usr/bin/env python3
"""Starts a server the way an MCP client does from its configuration file, on the
Python `mcp` SDK: the entry's `command`, `args` and `env` (over the SDK's default
environment, which keeps PATH as the client has it), from the client's directory.

    python config_client.py CONFIG_FILE KEY NAME

KEY is the table the servers are under (`mcpServers`, VS Code's `servers`); the file
may be JSON with comments (VS Code) only where the test gives plain JSON. Lists the
tools, calls `echo` with {"message": "through the client's config"}, and prints one
JSON line: {"tools": N, "echo": TEXT}.
"""
import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main(path, key, name):
    with open(path) as f:
        entry = json.load(f)[key][name]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry.get("args") or [],
        env=entry.get("env") or None,
        cwd=entry.get("cwd"),
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"message": "through the client's config"})
        text = result.content[0].text
    print(json.dumps({"tools": len(tools.tools), "echo": text}))


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
