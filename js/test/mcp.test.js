// MCP over stdio with the TypeScript SDK client: a tape recorded from a live server,
// replayed with the live server gone, and the record modes.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import { describe, expect, test } from "vitest";

import { reelServer } from "../src/index.js";
import { NO_SERVER, reel, session, tapes, text, traces } from "./support.js";

const EXAMPLE = [reel, "example", "server"];
const EVERYTHING = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");

/** The origin (`"tape"` or `"live"`) of the answer to each tool called in a trace. */
function answerOrigins(path) {
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const called = new Map();
  const origins = {};
  for (const line of lines) {
    const raw = line.raw;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) continue;
    if (line.dir === "in" && raw.method === "tools/call") called.set(raw.id, raw.params.name);
    else if (line.dir === "out" && called.has(raw.id)) origins[called.get(raw.id)] = line.origin;
  }
  return origins;
}

async function addAndList(client, a = 2, b = 40) {
  const tools = await client.listTools();
  const sum = await client.callTool({ name: "add", arguments: { a, b } });
  return { tools: tools.tools.map((t) => t.name).sort(), sum: text(sum) };
}

describe("reel example server", () => {
  test("records once, then replays offline with the same answers", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "example", dir, server: EXAMPLE, reel, cwd: dir });
    expect(rec.mode).toBe("record");
    expect(rec.cwd).toBe(dir);
    const live = await session(rec, addAndList);
    const recorded = await rec.finish();
    expect(recorded.label).toBe("example");
    expect(traces(dir)).toHaveLength(1);
    expect(live.sum).toContain("42");

    const play = reelServer({ tape: "example", dir, server: NO_SERVER, reel });
    expect(play.mode).toBe("replay");
    expect(play.args.slice(0, 2)).toEqual(["play", recorded.path]);
    const replayed = await session(play, addAndList);
    const report = await play.finish();
    expect(replayed).toEqual(live);
    expect(report.verdict).toBe("clean");
    expect(report.exit).toBe(0);
    expect(report.summary.missed).toBe(0);
    expect(traces(dir)).toHaveLength(1);
  });

  test("a call with other arguments than recorded fails finish() with reel's miss report", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "drift", dir, server: EXAMPLE, reel });
    await session(rec, (c) => addAndList(c));
    await rec.finish();

    const play = reelServer({ tape: "drift", dir, mode: "none", reel });
    const seen = await session(play, (c) =>
      c.callTool({ name: "add", arguments: { a: 1, b: 2 } }).then(
        () => undefined,
        (e) => e,
      ),
    );
    // The client gets reel's miss as a JSON-RPC error; the verdict comes from finish().
    expect(seen?.code).toBe(-32010);
    expect(seen.message).toContain("reel play: no recorded answer for tools/call");
    const err = await play.finish().then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("ReelReplayError");
    expect(err.message).toContain('replay of tape "drift" was not clean (verdict misses, exit 3)');
    expect(err.message).toContain("miss: tools/call");
    expect(err.message).toContain('request: {"arguments":{"a":1,"b":2},"name":"add"}');
    expect(err.message).toContain("/params/arguments/a: 2 -> 1");
    expect(err.message).toContain("/params/arguments/b: 40 -> 2");
    expect(err.report.summary.missed).toBe(1);
  });

  test("failOnUnused fails a replay that left recorded calls unasked", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "partial", dir, server: EXAMPLE, reel });
    await session(rec, addAndList);
    await rec.finish();
    const listOnly = (c) => c.listTools();
    const lenient = reelServer({ tape: "partial", dir, mode: "none", reel });
    await session(lenient, listOnly);
    expect((await lenient.finish()).summary.unused_total).toBe(1);

    const strict = reelServer({ tape: "partial", dir, mode: "none", reel, failOnUnused: true });
    await session(strict, listOnly);
    await expect(strict.finish()).rejects.toThrow(
      /replay of tape "partial" was not clean \(1 recorded exchange\(s\) unused \(failOnUnused\)\)[\s\S]*unused: .*tools\/call \{"arguments":\{"a":2,"b":40\},"name":"add"\}/,
    );
  });

  test('"none" without a tape throws and says how to record', () => {
    const dir = tapes();
    expect(() => reelServer({ tape: "missing", dir, mode: "none", server: EXAMPLE, reel })).toThrow(
      /no tape "missing" in .*record mode "none" only replays: record it once/,
    );
    expect(traces(dir)).toHaveLength(0);
  });

  test('"none" replays an existing tape and never records', async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "kept", dir, server: EXAMPLE, reel });
    await session(rec, addAndList);
    await rec.finish();
    const play = reelServer({ tape: "kept", dir, mode: "none", server: EXAMPLE, reel });
    expect(play.mode).toBe("replay");
    await session(play, addAndList);
    await play.finish();
    expect(traces(dir)).toHaveLength(1);
  });

  test('"all" records again, and the new run replaces the tape', async () => {
    const dir = tapes();
    const weather = (c) => c.callTool({ name: "weather", arguments: { city: "Lyon" } }).then(text);
    const first = reelServer({ tape: "again", dir, server: EXAMPLE, reel });
    const before = await session(first, weather);
    const firstRun = await first.finish();

    const changed = [...EXAMPLE, "--changed"];
    const second = reelServer({ tape: "again", dir, mode: "all", server: changed, reel });
    expect(second.mode).toBe("record");
    const after = await session(second, weather);
    const run = await second.finish();
    expect(after).not.toEqual(before);
    expect(traces(dir)).toHaveLength(1);
    expect(traces(dir)).toEqual([run.path.split("/").at(-1)]);
    expect(run.path).not.toBe(firstRun.path);

    const play = reelServer({ tape: "again", dir, mode: "none", reel });
    expect(await session(play, weather)).toEqual(after);
    await play.finish();
  });

  test("REEL_RECORD_MODE picks the mode when the option is absent", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "env", dir, server: EXAMPLE, reel });
    await session(rec, addAndList);
    await rec.finish();
    const saved = process.env.REEL_RECORD_MODE;
    try {
      process.env.REEL_RECORD_MODE = "all";
      expect(reelServer({ tape: "env", dir, server: EXAMPLE, reel }).mode).toBe("record");
      process.env.REEL_RECORD_MODE = "none";
      expect(() => reelServer({ tape: "other", dir, server: EXAMPLE, reel })).toThrow(/record mode "none" only replays/);
      process.env.REEL_RECORD_MODE = "bogus";
      expect(() => reelServer({ tape: "env", dir, reel })).toThrow(
        /unknown record mode "bogus" \(from REEL_RECORD_MODE\)/,
      );
      // The option wins over the environment.
      expect(reelServer({ tape: "env", dir, mode: "once", reel }).mode).toBe("replay");
    } finally {
      if (saved === undefined) delete process.env.REEL_RECORD_MODE;
      else process.env.REEL_RECORD_MODE = saved;
    }
  });
});

describe("server-everything", () => {
  test("a recorded echo and tool list replay with the live server gone", async () => {
    const dir = tapes();
    const everything = ["node", EVERYTHING, "stdio"];
    const script = async (c) => {
      const tools = await c.listTools();
      const echo = await c.callTool({ name: "echo", arguments: { message: "hello tape" } });
      return { tools: tools.tools.map((t) => t.name).sort(), echo: text(echo) };
    };
    const rec = reelServer({ tape: "everything", dir, server: everything, reel });
    const live = await session(rec, script);
    await rec.finish();
    expect(live.echo).toContain("hello tape");
    expect(live.tools).toContain("echo");

    const play = reelServer({ tape: "everything", dir, server: NO_SERVER, reel });
    expect(await session(play, script)).toEqual(live);
    expect((await play.finish()).verdict).toBe("clean");
  });
});

describe("new_episodes", () => {
  const echo = (c) => c.callTool({ name: "echo", arguments: { text: "hi" } }).then(text);
  const echoAndAdd = async (c) => [await echo(c), text(await c.callTool({ name: "add", arguments: { a: 2, b: 3 } }))];

  test("answers the taped tools from the tape, records the others, and the run becomes the tape", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "episodes", dir, server: EXAMPLE, reel });
    await session(rec, echo);
    const old = await rec.finish();

    const more = reelServer({ tape: "episodes", dir, mode: "new_episodes", server: EXAMPLE, reel });
    expect(more.mode).toBe("new_episodes");
    expect(more.args).toContain("--subset");
    expect(more.args[more.args.indexOf("--subset") + 1]).toBe("echo");
    expect(await session(more, echoAndAdd)).toEqual(["hi", "2 + 3 = 5"]);
    const run = await more.finish();
    expect(run.label).toBe("episodes");
    expect(run.kind).toBe("mcp");
    expect(run.path).not.toBe(old.path);
    expect(traces(dir)).toEqual([run.path.split("/").at(-1)]);
    // echo's answer came from the old tape; add was new and answered by the live server.
    expect(answerOrigins(run.path)).toEqual({ echo: "tape", add: "live" });

    // The new tape replays both offline.
    const play = reelServer({ tape: "episodes", dir, mode: "none", reel });
    expect(await session(play, echoAndAdd)).toEqual(["hi", "2 + 3 = 5"]);
    expect((await play.finish()).verdict).toBe("clean");
  });

  test("a taped tool called with new arguments is a miss, and the tape stays", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "episodes", dir, server: EXAMPLE, reel });
    await session(rec, echoAndAdd);
    const old = await rec.finish();

    const more = reelServer({ tape: "episodes", dir, mode: "new_episodes", server: EXAMPLE, reel });
    await session(more, (c) => c.callTool({ name: "echo", arguments: { text: "other" } }).catch((e) => e));
    const err = await more.finish().then(
      () => undefined,
      (e) => e,
    );
    expect(err?.name).toBe("ReelReplayError");
    expect(err.message).toContain('replay of tape "episodes" was not clean (verdict misses, exit 3)');
    expect(err.message).toContain('/params/arguments/text: "hi" -> "other"');
    expect(err.message).toContain(
      'record mode "new_episodes" answers calls of the tools the tape holds (add, echo) from the tape only',
    );
    expect(traces(dir)).toEqual([old.path.split("/").at(-1)]);
  });

  test("without a tape it records, and it needs the live server", async () => {
    const dir = tapes();
    expect(() => reelServer({ tape: "episodes", dir, mode: "new_episodes", reel })).toThrow(
      /there is no tape "episodes" in .* to replay, so it must record, and no live `server` command/,
    );
    const rec = reelServer({ tape: "episodes", dir, mode: "new_episodes", server: EXAMPLE, reel });
    expect(rec.mode).toBe("record");
    await session(rec, echo);
    await rec.finish();
    expect(() => reelServer({ tape: "episodes", dir, mode: "new_episodes", reel })).toThrow(
      /record mode "new_episodes" sends the calls the tape does not hold to the live server, and no live `server`/,
    );
  });
});

describe("setup errors", () => {
  test("an unknown record mode is named with the known ones", () => {
    expect(() => reelServer({ tape: "x", dir: tapes(), mode: "sometimes", server: EXAMPLE, reel })).toThrow(
      'unknown record mode "sometimes" (from the `mode` option): use one of none, once, new_episodes, all',
    );
  });

  test("a live server that does not exist is named before anything starts", () => {
    expect(() => reelServer({ tape: "x", dir: tapes(), server: NO_SERVER, reel })).toThrow(
      `the live server "${NO_SERVER[0]}" is not an executable file or on PATH; it is needed to record the tape`,
    );
  });

  test("a reel that does not exist is named", () => {
    expect(() => reelServer({ tape: "x", dir: tapes(), reel: "/nonexistent/reel" })).toThrow(
      "reel not found: the `reel` option names /nonexistent/reel, which is not an executable file",
    );
  });

  test("once without a tape and without a server cannot record", () => {
    expect(() => reelServer({ tape: "x", dir: tapes(), reel })).toThrow(
      /there is no tape "x" in .* to replay, so it must record, and no live `server` command was given/,
    );
  });

  test("a tape name that is a path is refused", () => {
    expect(() => reelServer({ tape: "a/b", dir: tapes(), reel })).toThrow(/the `tape` option must be a run name/);
    expect(() => reelServer({ tape: "a.jsonl", dir: tapes(), reel })).toThrow(/nor ending in '.jsonl'/);
  });
});
