#!/usr/bin/env python3
"""reel's own Python SDK (mcp 2.x, MCPServer) test server, stdio only.

It speaks both eras: a modern client (2026-07-28) discovers it with server/discover
and sends per-request _meta; a legacy client runs initialize. Tools: `add`, `shout`,
`count_down` (progress notifications and a log message); resource `note://readme`;
prompt `summarize`.
"""
import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("reel-demo", instructions="reel interop test server.")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper() + "!"


@server.tool()
async def count_down(start: int, ctx: Context) -> str:
    """Counts down to zero, reporting each step as progress."""
    for done, n in enumerate(range(start, 0, -1), start=1):
        await anyio.sleep(0.02)
        await ctx.report_progress(done, start, f"{n} left")
    await ctx.info(f"count_down from {start} finished")
    return "lift-off"


@server.resource("note://readme")
def readme() -> str:
    """A short static note."""
    return "reel records what MCP peers say to each other."


@server.prompt()
def summarize(topic: str) -> str:
    """Asks for a summary of a topic."""
    return f"Summarize {topic} in three sentences."


if __name__ == "__main__":
    server.run("stdio")
