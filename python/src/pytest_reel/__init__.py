"""pytest-reel: replay MCP and LLM tapes recorded by reel in pytest tests.

The fixtures (`reel_mcp`, `reel_mcp_factory`, `reel_llm`) live in `pytest_reel.plugin`,
which pytest loads through the `pytest11` entry point; this module names the objects
they hand to tests, and `find_reel`, the reel they run (for a test that starts reel
itself, e.g. `reel example server` as a live server).
"""

from .llm_tape import LlmTape
from .mcp_tape import McpTape
from .tapes import RECORD_MODES, ReelError, find_reel

__all__ = ["LlmTape", "McpTape", "RECORD_MODES", "ReelError", "find_reel"]
__version__ = "0.1.0"
