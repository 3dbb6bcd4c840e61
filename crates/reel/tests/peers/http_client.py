#!/usr/bin/env python3
"""reel's interop test client over Streamable HTTP, on the Python `mcp` SDK 2.3 `Client`.

    python http_client.py everything|demo [--mode auto|legacy] URL

The same fixed scripts as client.py (imported from it), against an MCP server at URL:
one `RESULT <step> <sha256>` line per step, then `ALL OK`. A run through
`reel rec --url` must print exactly what a direct run prints.
"""
import argparse
import os
import sys

# Importing the sibling scripts must not leave __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anyio  # noqa: E402
from mcp import Client  # noqa: E402

import client as script  # noqa: E402


async def main_async(suite: str, mode: str, url: str) -> None:
    async with Client(url, mode=mode, sampling_callback=script.on_sampling,
                      elicitation_callback=script.on_elicitation,
                      list_roots_callback=script.on_roots, read_timeout_seconds=60) as client:
        await (script.everything if suite == "everything" else script.demo)(client)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("suite", choices=["everything", "demo"])
    ap.add_argument("--mode", default="auto")
    ap.add_argument("url")
    a = ap.parse_args()
    anyio.run(main_async, a.suite, a.mode, a.url)
    print("ALL OK", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
