#!/usr/bin/env python3
"""reel's interop test client over Streamable HTTP, on the Python `mcp` SDK 2.3 `Client`.

    python http_client.py everything|demo [--mode auto|legacy] [--stream-first] URL

The same fixed scripts as client.py (imported from it), against an MCP server at URL:
one `RESULT <step> <sha256>` line per step, then `ALL OK`. A run through
`reel rec --url` must print exactly what a direct run prints.

`--stream-first` holds `notifications/initialized` back until the GET stream the SDK
opens beside it is answered. The two race in every run; this makes the outcome the one
that otherwise comes by chance now and then: the server's announcements after
initialization (server-everything's five `tools/list_changed`) reach the client.
"""
import argparse
import os
import sys

# Importing the sibling scripts must not leave __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

import client as script  # noqa: E402


def stream_first(url: str):
    """A transport whose initialized notification waits for the GET stream's answer."""
    opened = anyio.Event()

    async def on_request(request) -> None:
        if request.method == "POST" and b'"notifications/initialized"' in request.content:
            # Bounded: a server that never answers the GET still gets initialized.
            with anyio.move_on_after(10):
                await opened.wait()

    async def on_response(response) -> None:
        if response.request.method == "GET":
            opened.set()

    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=300),
        event_hooks={"request": [on_request], "response": [on_response]},
    )
    return streamable_http_client(url, http_client=http)


async def main_async(suite: str, mode: str, url: str, first: bool) -> None:
    server = stream_first(url) if first else url
    async with Client(server, mode=mode, sampling_callback=script.on_sampling,
                      elicitation_callback=script.on_elicitation,
                      list_roots_callback=script.on_roots, read_timeout_seconds=60) as client:
        await (script.everything if suite == "everything" else script.demo)(client)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", choices=["everything", "demo"])
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--stream-first", action="store_true")
    ap.add_argument("url")
    a = ap.parse_args()
    anyio.run(main_async, a.suite, a.mode, a.url, a.stream_first)
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
