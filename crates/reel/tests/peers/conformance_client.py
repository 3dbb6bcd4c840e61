#!/usr/bin/env python3
"""reel's conformance client: what `@modelcontextprotocol/conformance client` starts for each
client scenario, on the Python `mcp` 2.x `Client`.

    conformance client --command "python conformance_client.py" --scenario NAME
    # the suite runs:  python conformance_client.py SERVER_URL
    # with MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and, for some auth
    # scenarios, MCP_CONFORMANCE_CONTEXT (JSON) in the environment.

It does what each core scenario's test server waits for: the handshake (`initialize`), a
tool call (`tools_call`), an elicitation answered with the schema's defaults
(`elicitation-sep1034-client-defaults`), a call whose SSE stream the server closes so the
client resumes with `Last-Event-ID` after `retry` (`sse-retry`), and for `auth/*` the
OAuth 2.1 authorization-code flow with PKCE (discovery through protected-resource and
authorization-server metadata, dynamic registration, a client-id metadata document or
pre-registered credentials), driven without a browser: the authorization endpoint's
redirect is read, not followed.

Exit status 0 when the scenario's steps ran, 1 (with the error on stderr) otherwise; the
suite judges the rest from what it saw.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2

from mcp.client import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

MODERN = "2026-07-28"
# What the suite's CIMD scenario expects as a URL-based client id.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3030/callback"
# Seconds to wait for the standalone GET stream before giving up (sse-retry).
STREAM_LIMIT = 20


def mode(version: str) -> str:
    """The 2026-07-28 wire when the scenario runs at that revision, else the initialize handshake."""
    return MODERN if version == MODERN else "legacy"


async def accept_with_defaults(context: Any, params: Any) -> Any:
    """Accepts an elicitation, filling every field that has a default with it."""
    from mcp_types import ElicitResult

    schema = getattr(params, "requested_schema", None) or {}
    content = {k: v["default"] for k, v in (schema.get("properties") or {}).items() if "default" in v}
    return ElicitResult(action="accept", content=content)


# ---------------------------------------------------------------------------------------
# OAuth without a browser


class MemoryTokens:
    def __init__(self, client_info: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class HeadlessAuthorization:
    """Visits the authorization URL like a browser would, but stops at the redirect back to
    the client and reads the code (and state, iss) from it."""

    def __init__(self) -> None:
        self._result: AuthorizationCodeResult | None = None

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as http:
            response = await http.get(url)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"authorization endpoint answered {response.status_code} without a redirect")
        query = parse_qs(urlparse(location).query)
        first = lambda k: query[k][0] if k in query else None  # noqa: E731
        self._result = AuthorizationCodeResult(code=first("code") or "", state=first("state"), iss=first("iss"))

    async def callback(self) -> AuthorizationCodeResult:
        if self._result is None:
            raise RuntimeError("no authorization redirect was seen")
        result, self._result = self._result, None
        return result


def oauth(url: str, context: dict[str, Any]) -> OAuthClientProvider:
    browser = HeadlessAuthorization()
    metadata = OAuthClientMetadata(
        client_name="reel-conformance-client",
        redirect_uris=[REDIRECT_URI],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=None,
    )
    client_info = None
    if "client_id" in context:
        # Pre-registered credentials handed over by the scenario.
        client_info = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT_URI],
            token_endpoint_auth_method="client_secret_basic" if context.get("client_secret") else "none",
        )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=MemoryTokens(client_info),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
        client_metadata_url=CLIENT_METADATA_URL,
    )


# ---------------------------------------------------------------------------------------


def http_client(**kwargs: Any) -> httpx2.AsyncClient:
    # The SDK's own defaults: a long read timeout, because a server may hold a stream open.
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300), **kwargs)


async def run(url: str, scenario: str, version: str, context: dict[str, Any]) -> None:
    if scenario.startswith("auth/"):
        http = http_client(auth=oauth(url, context))
        async with http, Client(streamable_http_client(url, http_client=http), mode=mode(version)) as client:
            tools = await client.list_tools()
            if tools.tools:
                await client.call_tool(tools.tools[0].name, {})
        return

    # The SDK opens its standalone GET stream as soon as `notifications/initialized` is
    # sent, concurrently with the next request. `sse-retry`'s server takes any GET for the
    # reconnection it times, and answers a pending call on it: a tool call that overtook the
    # standalone GET would be answered there, and the timing measured against the wrong GET.
    # So that scenario waits until the standalone stream is open before it calls.
    standalone_open = anyio.Event()

    async def on_response(response: httpx2.Response) -> None:
        if response.request.method == "GET" and "last-event-id" not in response.request.headers:
            standalone_open.set()

    elicitation = accept_with_defaults if scenario == "elicitation-sep1034-client-defaults" else None
    http = http_client(event_hooks={"response": [on_response]})
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode=mode(version), elicitation_callback=elicitation) as client:
        if scenario == "initialize":
            await client.list_tools()
        elif scenario == "tools_call":
            await client.list_tools()
            await client.call_tool("add_numbers", {"a": 5, "b": 3})
        elif scenario == "elicitation-sep1034-client-defaults":
            await client.call_tool("test_client_elicitation_defaults", {})
        elif scenario == "sse-retry":
            with anyio.fail_after(STREAM_LIMIT):
                await standalone_open.wait()
            await client.call_tool("test_reconnection", {})
        else:
            raise SystemExit(f"conformance_client.py: scenario {scenario!r} is not implemented")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: conformance_client.py SERVER_URL  (MCP_CONFORMANCE_SCENARIO in the environment)")
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    anyio.run(run, url, scenario, version, context)


if __name__ == "__main__":
    main()
