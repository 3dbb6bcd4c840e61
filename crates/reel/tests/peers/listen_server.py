#!/usr/bin/env python3
"""reel's `subscriptions/listen` fixture server, on the Python `mcp` SDK 2.x `MCPServer`.

    python listen_server.py                      (stdio)
    python listen_server.py --http PORT          (Streamable HTTP at /mcp)

Tool `add_tool(name)` registers a tool of that name and publishes a tools list-changed
event (`ctx.notify_tools_changed()`) to the client's `subscriptions/listen` stream.
"""
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("reel-listen", instructions="listen fixture for reel.")


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Adds a tool named `name` and tells listeners the tool list changed."""

    def made() -> str:
        return f"{name} ran"

    server.add_tool(made, name=name, description=f"the tool {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="streamable-http", port=int(sys.argv[2]), host="127.0.0.1")
    else:
        server.run()
