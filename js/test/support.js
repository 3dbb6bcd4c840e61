// What the test files share: a fresh tape directory per test, the `reel` under test,
// and an MCP session through the TypeScript SDK's stdio client.

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { findReel } from "../src/index.js";

/** The `reel` the suite drives, found as the package finds it (REEL_BIN, else reel-cli's, else PATH). */
export const reel = findReel(undefined);

const made = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new, empty directory for one test's tapes, removed when the file's tests are done. */
export function tapes() {
  const dir = mkdtempSync(join(tmpdir(), "reel-test-tapes-"));
  made.push(dir);
  return dir;
}

/** The trace files in a tape directory. */
export function traces(dir) {
  return readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
}

/** A command line that does not exist: replay must never start it. */
export const NO_SERVER = ["/nonexistent/reel-test/live-server"];

/**
 * Connects the SDK client to `spec` (what reelServer returned), runs `body(client)`,
 * closes the client, and returns what `body` returned.
 */
export async function session(spec, body) {
  const transport = new StdioClientTransport(spec);
  const client = new Client({ name: "reel-test-suite", version: "0.1.0" });
  await client.connect(transport);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

/** The text of a tools/call result's first content block. */
export function text(result) {
  return result.content?.[0]?.text;
}
