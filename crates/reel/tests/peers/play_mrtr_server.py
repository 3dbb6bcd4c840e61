#!/usr/bin/env python3
"""reel's input_required fixture server, on the Python `mcp` SDK 2.x `MCPServer` (stdio).

    python play_mrtr_server.py

Tool `book(city)` needs a day the model did not give: a resolver asks the client with
`Elicit`. With a 2026-07-28 client the SDK answers the first `tools/call` with an
`input_required` result (`inputRequests` + `requestState`); the client retries with its
`inputResponses` and the echoed `requestState` and gets the booking. (A legacy client
is asked with a standalone `elicitation/create` mid-call instead.) Tool `add(a, b)` is a
plain call, so a session mixes both kinds.
"""
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Elicit, MCPServer, Resolve

server = MCPServer("reel-mrtr", instructions="input_required fixture for reel play.")


class Day(BaseModel):
    day: str


def ask_day(city: str):
    return Elicit(f"Which day do you want to visit {city}?", Day)


@server.tool()
def book(city: str, when: Annotated[Day, Resolve(ask_day)]) -> str:
    """Books a visit to a city on the day the user picks."""
    return f"booked {city} on {when.day}"


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


if __name__ == "__main__":
    server.run("stdio")
