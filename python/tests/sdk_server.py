"""A live MCP server reel did not write, for the inner suites to record: the Python MCP
SDK's own high-level server (`MCPServer`, FastMCP before SDK 2), over stdio.

    python sdk_server.py

Its answers come from the SDK's code paths, not reel's: tool schemas generated from the
signatures, results with structured content, progress notifications sent before a result.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("pytest-reel-sdk-server")


@server.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@server.tool()
def get_sum(a: int, b: int) -> str:
    """Add two integers."""
    return f"The sum of {a} and {b} is {a + b}."


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting progress at each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run("stdio")
