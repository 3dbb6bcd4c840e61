// MCP over stdio with the TypeScript SDK client: a tape recorded from a live server,
// replayed with the live server gone, and the record modes.

import { createRequire } from "node:module";

import { describe, expect, test } from "vitest";

import { reelServer } from "../src/index.js";
import { NO_SERVER, reel, session, tapes, text, traces } from "./support.js";

const EXAMPLE = [reel, "example", "server"];
const EVERYTHING = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");

async function addAndList(client, a = 2, b = 40) {
  const tools = await client.listTools();
  const sum = await client.callTool({ name: "add", arguments: { a, b } });
  return { tools: tools.tools.map((t) => t.name).sort(), sum: text(sum) };
}

describe("reel example server", () => {
  test("records once, then replays offline with the same answers", async () => {
    const dir = tapes();
    const rec = reelServer({ tape: "example", dir, server: EXAMPLE, reel });
    expect(rec.mode).toBe("record");
    const live = await session(rec, addAndList);
    const recorded = await rec.finish();
    expect(recorded.label).toBe("example");
    expect(traces(dir)).toHaveLength(1);
    expect(live.sum).toContain("42");

    const play = reelServer({ tape: "example", dir, server: NO_SERVER, reel });
    expect(play.mode).toBe("replay");
    expect(play.args.slice(0, 2)).toEqual(["play", "example"]);
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

  test('"all" records again over an existing tape, and replay then serves the new one', async () => {
    const dir = tapes();
    const weather = (c) => c.callTool({ name: "weather", arguments: { city: "Lyon" } }).then(text);
    const first = reelServer({ tape: "again", dir, server: EXAMPLE, reel });
    const before = await session(first, weather);
    await first.finish();

    const changed = [...EXAMPLE, "--changed"];
    const second = reelServer({ tape: "again", dir, mode: "all", server: changed, reel });
    expect(second.mode).toBe("record");
    const after = await session(second, weather);
    await second.finish();
    expect(after).not.toEqual(before);
    expect(traces(dir)).toHaveLength(2);

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

describe("setup errors", () => {
  test("new_episodes is refused with the reason", () => {
    expect(() => reelServer({ tape: "x", dir: tapes(), mode: "new_episodes", server: EXAMPLE, reel })).toThrow(
      /record mode "new_episodes" is not supported: .*re-record the tape with mode "all"/,
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
  });
});
