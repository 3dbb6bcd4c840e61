// LLM APIs with the Anthropic SDK client: a conversation recorded from a live model
// server (the aimock mock, speaking the Anthropic Messages wire format), replayed with
// that server stopped, and a request the tape does not hold.

import { afterEach, describe, expect, test } from "vitest";
import Anthropic from "@anthropic-ai/sdk";
import { LLMock } from "@copilotkit/aimock";

import { reelLlm, reelServer } from "../src/index.js";
import { reel, tapes, traces } from "./support.js";

const stops = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()().catch(() => {});
});

/** A live model server on loopback; its URL. */
async function liveModel() {
  const mock = new LLMock({ port: 0, host: "127.0.0.1", logLevel: "warn" });
  mock.addFixtures([{ match: { model: "reel-text" }, response: { content: "Hello from the live model." } }]);
  const url = (await mock.start()).replace("localhost", "127.0.0.1").replace(/\/$/, "");
  return { url, stop: () => mock.stop() };
}

function ask(baseURL, content) {
  const client = new Anthropic({ baseURL, apiKey: "test-key-not-secret", maxRetries: 0 });
  return client.messages.create({ model: "reel-text", max_tokens: 64, messages: [{ role: "user", content }] });
}

/** Records one question on tape `name` in `dir`, with the live model stopped afterwards. */
async function recordOne(dir, name, question) {
  const live = await liveModel();
  stops.push(live.stop);
  const rec = await reelLlm({ tape: name, dir, upstream: live.url, reel });
  expect(rec.mode).toBe("record");
  const answer = await ask(rec.baseURL, question);
  await rec.stop();
  await live.stop();
  return answer;
}

describe("reel llm", () => {
  test("records once, then replays with the live model gone", async () => {
    const dir = tapes();
    const recorded = await recordOne(dir, "chat", "Say hello.");
    expect(recorded.content[0].text).toBe("Hello from the live model.");
    expect(traces(dir)).toHaveLength(1);

    // "once" with a tape replays; the upstream is a port nothing listens on.
    const play = await reelLlm({ tape: "chat", dir, upstream: "http://127.0.0.1:9", reel });
    expect(play.mode).toBe("replay");
    expect(play.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const replayed = await ask(play.baseURL, "Say hello.");
    expect(replayed.content).toEqual(recorded.content);
    expect(await play.stop()).toMatchObject({ exit: 0 });
    expect(traces(dir)).toHaveLength(1);
  });

  test("a request the tape does not hold fails stop() with the miss report", async () => {
    const dir = tapes();
    await recordOne(dir, "drift", "Say hello.");
    const play = await reelLlm({ tape: "drift", dir, mode: "none", reel });
    const seen = await ask(play.baseURL, "Say goodbye.").then(
      () => undefined,
      (e) => e,
    );
    expect(seen).toBeInstanceOf(Anthropic.APIError);
    const err = await play.stop().then(
      () => undefined,
      (e) => e,
    );
    expect(err?.name).toBe("ReelReplayError");
    expect(err.message).toContain('LLM tape "drift" answered requests with misses (exit 3)');
    expect(err.message).toContain("/v1/messages");
    expect(err.message).toContain("Say goodbye.");
  });

  test('"all" records again, and the new run replaces the tape', async () => {
    const dir = tapes();
    await recordOne(dir, "again", "Say hello.");
    const live = await liveModel();
    stops.push(live.stop);
    const rec = await reelLlm({ tape: "again", dir, mode: "all", upstream: live.url, reel });
    expect(rec.mode).toBe("record");
    const before = traces(dir);
    await ask(rec.baseURL, "Say hello again.");
    await rec.stop();
    expect(traces(dir)).toHaveLength(1);
    expect(traces(dir)).not.toEqual(before);

    const play = await reelLlm({ tape: "again", dir, mode: "none", reel });
    expect((await ask(play.baseURL, "Say hello again.")).content[0].text).toBe("Hello from the live model.");
    await play.stop();
  });

  test('"none" without a tape throws and says how to record', async () => {
    await expect(reelLlm({ tape: "missing", dir: tapes(), mode: "none", reel })).rejects.toThrow(
      /no LLM tape "missing" in .*record mode "none" only replays: record it once/,
    );
  });

  test('"new_episodes" replays a tape that exists, records one that does not, and says so on a miss', async () => {
    const dir = tapes();
    const live = await liveModel();
    stops.push(live.stop);
    const rec = await reelLlm({ tape: "episodes", dir, mode: "new_episodes", upstream: live.url, reel });
    expect(rec.mode).toBe("record");
    await ask(rec.baseURL, "Say hello.");
    await rec.stop();
    const tape = traces(dir);

    const play = await reelLlm({ tape: "episodes", dir, mode: "new_episodes", upstream: live.url, reel });
    expect(play.mode).toBe("replay");
    expect((await ask(play.baseURL, "Say hello.")).content[0].text).toBe("Hello from the live model.");
    await play.stop();

    const other = await reelLlm({ tape: "episodes", dir, mode: "new_episodes", upstream: live.url, reel });
    await ask(other.baseURL, "Something new.").catch(() => {});
    await expect(other.stop()).rejects.toThrow(
      /answered requests with misses \(exit 3\)[\s\S]*record mode "new_episodes" replays an LLM tape that exists/,
    );
    expect(traces(dir)).toEqual(tape);
  });

  test("REEL_LLM_UPSTREAM is where a recording goes when the option is absent", async () => {
    const dir = tapes();
    const live = await liveModel();
    stops.push(live.stop);
    const saved = process.env.REEL_LLM_UPSTREAM;
    try {
      process.env.REEL_LLM_UPSTREAM = live.url;
      const rec = await reelLlm({ tape: "env", dir, reel });
      expect((await ask(rec.baseURL, "Say hello.")).content[0].text).toBe("Hello from the live model.");
      await rec.stop();
    } finally {
      if (saved === undefined) delete process.env.REEL_LLM_UPSTREAM;
      else process.env.REEL_LLM_UPSTREAM = saved;
    }
    expect(traces(dir)).toHaveLength(1);
  });

  test("an LLM tape is not an MCP tape of the same name", async () => {
    const dir = tapes();
    await recordOne(dir, "shared", "Say hello.");
    expect(() => reelServer({ tape: "shared", dir, mode: "none", reel })).toThrow(/no tape "shared" in /);
  });
});
