#!/usr/bin/env python3
"""A minimal stdio MCP echo server of reel's own, standard library only (no SDK).

    python play_echo_server.py

The live server of the `reel play --subset` tests and the Python baseline of the
`reel play` bench (the kind of minimal live server the neighbours were measured with).
It answers `initialize`, `ping`, `tools/list` and `tools/call echo` (the `text`, else
the `message` argument, back as text content); other requests get -32601;
notifications are ignored. One line in, one line out, flushed.
"""
import json
import sys

TOOLS = {"tools": [{
    "name": "echo",
    "description": "Returns its text argument.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}]}


def answer(msg):
    mid = msg.get("id")
    method = msg.get("method")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "play-echo", "version": "1"}}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": mid, "result": {}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": mid, "result": TOOLS}
    if method == "tools/call":
        args = (msg.get("params") or {}).get("arguments") or {}
        text = args.get("text", args.get("message"))
        if isinstance(text, str):
            return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}}
        return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "echo needs a text argument"}}
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}


def main():
    out = sys.stdout
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        out.write(json.dumps(answer(msg), separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
