// An agent on the Vercel AI SDK (npm `ai` with `@ai-sdk/anthropic` and `@ai-sdk/openai`),
// for `reel llm`'s tests: a client of both model APIs built on neither official SDK.
//
//     node ai_sdk_client.mjs --api anthropic|chat|responses --mode stream|plain \
//         --scenario text|tool [--model M[,M…]] [--runs N]
//
// Base URLs from where the AI SDK reads them itself: ANTHROPIC_BASE_URL (a base that
// INCLUDES the version: the SDK posts to `${base}/messages`) and OPENAI_BASE_URL (with
// `/v1`). `reel llm -- CMD` sets ANTHROPIC_BASE_URL without `/v1`, so through reel this
// client posts `/messages`, which reel must route to the provider's `/v1/messages`.
// Keys are fixed fakes; no retries.
//
// `tool`: the model may call `get_weather` ({city}), whose result is "sunny, 21 C"; at most
// two steps. Prints ONE JSON line per run and model: {"model", "text", "usage":
// {"inputTokens", "outputTokens"}, "finishReason", "steps"}; on an exception
// {"error": {"class", "message"}} and exits 3. `--runs N` repeats the case N times in
// this process, each run asking every model in turn.
//
// The packages are loaded from REEL_PEERS/node_modules (default: the workspace's
// `.peers/`). The AI SDK declares Node >= 22: the tests run this on `.peers/node24`.

import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.REEL_PEERS || join(here, "../../../../.peers");
const load = async (name) => {
  const { createRequire } = await import("node:module");
  const require = createRequire(join(peers, "node_modules", "reel-peers-resolver.js"));
  return import(pathToFileURL(require.resolve(name)).href);
};

const { values: args } = parseArgs({
  options: {
    api: { type: "string" },
    mode: { type: "string" },
    scenario: { type: "string" },
    model: { type: "string" },
    runs: { type: "string" },
  },
});
const check = (name, allowed) => {
  if (!allowed.includes(args[name])) {
    console.error(`--${name} must be one of ${allowed.join("|")}`);
    process.exit(64);
  }
};
check("api", ["anthropic", "chat", "responses"]);
check("mode", ["stream", "plain"]);
check("scenario", ["text", "tool"]);
const modelNames = (args.model || `reel-${args.scenario}`).split(",");
const runs = Number(args.runs || "1");

const ai = await load("ai");
const { z } = await load("zod");

async function model(modelName) {
  if (args.api === "anthropic") {
    const { createAnthropic } = await load("@ai-sdk/anthropic");
    return createAnthropic({ apiKey: "sk-ant-test-reel-0000" })(modelName);
  }
  const { createOpenAI } = await load("@ai-sdk/openai");
  const openai = createOpenAI({ apiKey: "sk-test-reel-0000000000000000" });
  return args.api === "chat" ? openai.chat(modelName) : openai.responses(modelName);
}

const tools =
  args.scenario === "tool"
    ? {
        get_weather: ai.tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async () => "sunny, 21 C",
        }),
      }
    : undefined;

async function once(m) {
  const request = {
    model: m,
    prompt: args.scenario === "tool" ? "What is the weather in Paris?" : "Say hello.",
    maxOutputTokens: 256,
    maxRetries: 0,
    tools,
    stopWhen: ai.stepCountIs(2),
  };
  if (args.mode === "plain") {
    const r = await ai.generateText(request);
    return { text: r.text, usage: r.totalUsage, finishReason: r.finishReason, steps: r.steps.length };
  }
  let failure;
  const r = ai.streamText({ ...request, onError: ({ error }) => (failure = error) });
  const text = await r.text;
  if (failure) throw failure;
  return {
    text,
    usage: await r.totalUsage,
    finishReason: await r.finishReason,
    steps: (await r.steps).length,
  };
}

const models = await Promise.all(modelNames.map(model));
for (let i = 0; i < runs; i++) {
  for (const [n, m] of models.entries()) {
    try {
      const out = await once(m);
      const usage = { inputTokens: out.usage?.inputTokens, outputTokens: out.usage?.outputTokens };
      console.log(JSON.stringify({ model: modelNames[n], ...out, usage }));
    } catch (e) {
      console.log(JSON.stringify({ error: { class: e?.constructor?.name, message: String(e?.message ?? e) } }));
      process.exit(3);
    }
  }
}
