#!/usr/bin/env python3
"""reel's Python SDK (mcp 2.x, MCPServer) test server over Streamable HTTP.

    python http_server.py PORT        -> http://127.0.0.1:PORT/mcp

The same tools, resource and prompt as demo_server.py (imported from it, so the stdio
and HTTP tests exercise one server), served over Streamable HTTP. Dual-era: a modern
client speaks 2026-07-28 (server/discover, per-request _meta, Mcp-Method/Mcp-Name
headers, no session); a legacy client gets initialize, an Mcp-Session-Id and SSE
answers with CRLF line endings.
"""
import os
import sys

# Importing the sibling scripts must not leave __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from demo_server import server  # noqa: E402

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
