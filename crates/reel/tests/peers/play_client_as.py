#!/usr/bin/env python3
"""Runs one of the test client scripts unchanged, as another client.

    python play_client_as.py NAME VERSION SCRIPT [ARGS...]

Sets the Python SDK's default client identity (sent as `clientInfo` in `initialize`,
and as `io.modelcontextprotocol/clientInfo` in every 2026-07-28 request) to NAME and
VERSION, then runs SCRIPT with ARGS as its own `__main__`. `reel play` must answer the
other client from a recording of the first.
"""
import runpy
import sys

import mcp.client.session as session
import mcp_types as types

name, version, script = sys.argv[1:4]
session.DEFAULT_CLIENT_INFO = types.Implementation(name=name, version=version)
sys.argv = [script, *sys.argv[4:]]
runpy.run_path(script, run_name="__main__")
