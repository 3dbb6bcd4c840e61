//! The test-runner integrations as their users run them: the pytest plugin in
//! `python/` (pytest with the Python MCP SDK client) and the npm package in `js/`
//! (vitest with the TypeScript SDK client), each driving the built `reel`.

mod pytest;
mod vitest;
