//! The test-runner integrations as their users run them: the npm package in `js/`
//! (vitest with the TypeScript SDK client), driving the built `reel`.

mod vitest;
