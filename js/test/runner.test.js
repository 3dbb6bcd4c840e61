// The package as a user's vitest run sees it: an inner test file (test/inner/) run by
// vitest in a process of its own, once on the recorded call and once on a call that
// drifted from it. The drifted run must fail, and its output must carry reel's report.

import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { beforeAll, expect, test } from "vitest";

import { reelServer } from "../src/index.js";
import { reel, session, tapes } from "./support.js";

const inner = join(dirname(fileURLToPath(import.meta.url)), "inner");
// The vitest this suite runs under, started as its `vitest` command is.
const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const dir = tapes();

beforeAll(async () => {
  const rec = reelServer({ tape: "inner", dir, server: [reel, "example", "server"], reel });
  await session(rec, (c) => c.callTool({ name: "add", arguments: { a: 2, b: 40 } }));
  await rec.finish();
});

function runInner(add) {
  const out = spawnSync(process.execPath, [vitest, "run"], {
    cwd: inner,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, REEL_BIN: reel, REEL_TEST_TAPES: dir, REEL_TEST_ADD: add, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  return { status: out.status, output: `${out.stdout}\n${out.stderr}` };
}

test("the recorded call passes in the user's run", () => {
  const run = runInner("2,40");
  expect(run.output).toMatch(/Tests\s+1 passed \(1\)/);
  expect(run.status, run.output).toBe(0);
});

test("a drifted call fails the user's run with the report naming the call", () => {
  const run = runInner("7,40");
  expect(run.status, run.output).toBe(1);
  expect(run.output).toContain('ReelReplayError: replay of tape "inner" was not clean (verdict misses, exit 3)');
  expect(run.output).toContain('request: {"arguments":{"a":7,"b":40},"name":"add"}');
  expect(run.output).toContain("/params/arguments/a: 2 -> 7");
});
