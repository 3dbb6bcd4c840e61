#!/usr/bin/env python3
"""reel's `play --listen` / `verify --url` test server: the demo server over Streamable HTTP.

    python play_http_server.py PORT [--alter]    -> http://127.0.0.1:PORT/mcp

The tools, resource and prompt of demo_server.py (imported from it), served over
Streamable HTTP by the Python SDK 2.x `MCPServer` (dual-era: a 2026-07-28 client gets
server/discover and session-less requests, a legacy one initialize and a session).
--alter: `add` answers a + b + 1, the regression `reel verify --url` must report.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mcp.server.mcpserver import MCPServer  # noqa: E402

import demo_server  # noqa: E402

server = MCPServer("reel-demo", instructions="reel interop test server.")

if "--alter" in sys.argv:
    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b + 1
else:
    server.tool()(demo_server.add)

server.tool()(demo_server.shout)
server.tool()(demo_server.count_down)
server.resource("note://readme")(demo_server.readme)
server.prompt()(demo_server.summarize)

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
