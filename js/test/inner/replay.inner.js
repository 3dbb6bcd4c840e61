// A user's test file, run by the outer suite in a vitest of its own: the session is
// replayed in beforeAll and judged in afterAll, as the README shows. REEL_TEST_TAPES
// names the tape directory; REEL_TEST_ADD the arguments of the one call ("a,b").

import { afterAll, beforeAll, expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { reelServer } from "../../src/index.js";

const server = reelServer({ tape: "inner", dir: process.env.REEL_TEST_TAPES, mode: "none" });
const client = new Client({ name: "inner-suite", version: "0.1.0" });

beforeAll(async () => {
  await client.connect(new StdioClientTransport(server));
});

afterAll(async () => {
  await client.close();
  await server.finish();
});

test("adds on the tape", async () => {
  const [a, b] = process.env.REEL_TEST_ADD.split(",").map(Number);
  // A tolerant client: a failed call is logged, not thrown; afterAll judges the replay.
  const result = await client.callTool({ name: "add", arguments: { a, b } }).catch((e) => ({ error: e.message }));
  expect(result).toBeTypeOf("object");
});
