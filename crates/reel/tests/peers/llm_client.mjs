// reel's `reel llm` test client on the official Node SDKs (@anthropic-ai/sdk, openai),
// the twin of llm_client.py: the same command line and the same output line.
//
//     node llm_client.mjs --api anthropic|chat|responses --mode stream|plain \
//         --scenario text|tool|think [--model M] [--raw-out FILE] [--repeat N]
//
// Base URLs from ANTHROPIC_BASE_URL (no `/v1`) and OPENAI_BASE_URL (with `/v1`), read by
// the SDKs themselves; keys from ANTHROPIC_API_KEY / OPENAI_API_KEY or a fixed fake key;
// no retries, a 30 s timeout. Prints ONE JSON line: {"result", "usage", "text",
// "tool_calls": [{"name", "input"}], "thinking", "rounds"}, or on an exception
// {"error": {"class", "status", "message"}} and exits 3. Streams: Anthropic
// `messages.stream(...).finalMessage()`, chat chunks folded into one completion,
// Responses the `response.completed` event's response.
//
// `--raw-out FILE` writes every response body the SDK read, one after the other. It
// goes through the SDK's `fetch` option, so it is the body after fetch's content
// decoding (gzip undone), unlike llm_client.py's, which is the bytes off the socket.
//
// The SDKs are loaded from REEL_PEERS/node_modules (default: the workspace's `.peers/`).

import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { writeFileSync } from "node:fs";
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
    "raw-out": { type: "string" },
    repeat: { type: "string" },
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
check("scenario", ["text", "tool", "think"]);
const model = args.model || `reel-${args.scenario}`;
const stream = args.mode === "stream";

const FAKE_KEY = "sk-test-reel-0000000000000000";
const TIMEOUT = 30_000;
const TOOL_RESULT = "sunny, 21 C";
const PROMPTS = {
  text: "Say hello.",
  tool: "What is the weather in Paris?",
  think: "What is 17 * 23? Think it through.",
};
const WEATHER_SCHEMA = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
};

// Every response body, in order, as the SDK read it.
const bodies = [];
const pending = [];
function teeFetch(url, init) {
  return fetch(url, init).then((res) => {
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    const slot = bodies.length;
    bodies.push([]);
    pending.push(
      (async () => {
        for await (const chunk of mine) bodies[slot].push(Buffer.from(chunk));
      })().catch(() => {}),
    );
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  });
}
const common = { maxRetries: 0, timeout: TIMEOUT, ...(args["raw-out"] ? { fetch: teeFetch } : {}) };

const parse = (text) => {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return text;
  }
};

async function runAnthropic() {
  const { default: Anthropic } = await load("@anthropic-ai/sdk");
  const keyed = process.env.ANTHROPIC_API_KEY || process.env.ANTHROPIC_AUTH_TOKEN;
  const client = new Anthropic({ ...common, ...(keyed ? {} : { apiKey: FAKE_KEY }) });
  const messages = [{ role: "user", content: PROMPTS[args.scenario] }];
  const extra = {};
  let maxTokens = 1024;
  if (args.scenario === "tool") {
    extra.tools = [
      { name: "get_weather", description: "Get the current weather for a city.", input_schema: WEATHER_SCHEMA },
    ];
  }
  if (args.scenario === "think") {
    extra.thinking = { type: "enabled", budget_tokens: 1024 };
    maxTokens = 2048;
  }
  const call = () => {
    const params = { model, max_tokens: maxTokens, messages, ...extra };
    return stream ? client.messages.stream(params).finalMessage() : client.messages.create(params);
  };
  let message = await call();
  let rounds = 1;
  const uses = message.content.filter((b) => b.type === "tool_use");
  if (args.scenario === "tool" && uses.length) {
    messages.push({ role: "assistant", content: message.content });
    messages.push({
      role: "user",
      content: uses.map((u) => ({ type: "tool_result", tool_use_id: u.id, content: TOOL_RESULT })),
    });
    message = await call();
    rounds = 2;
  }
  return {
    result: message,
    usage: message.usage ?? null,
    text: message.content.filter((b) => b.type === "text").map((b) => b.text).join(""),
    tool_calls: message.content.filter((b) => b.type === "tool_use").map((b) => ({ name: b.name, input: b.input })),
    thinking: message.content.filter((b) => b.type === "thinking").map((b) => b.thinking).join(""),
    rounds,
  };
}

async function openaiClient() {
  const { default: OpenAI } = await load("openai");
  return new OpenAI({ ...common, ...(process.env.OPENAI_API_KEY ? {} : { apiKey: FAKE_KEY }) });
}

// The chunks of a streamed chat completion, as the one completion they make.
async function foldChat(chunks) {
  const out = { id: "", object: "chat.completion", created: 0, model: "", choices: [] };
  const choices = new Map();
  let usage = null;
  for await (const chunk of chunks) {
    out.id = chunk.id || out.id;
    out.created = chunk.created || out.created;
    out.model = chunk.model || out.model;
    if (chunk.system_fingerprint) out.system_fingerprint = chunk.system_fingerprint;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      if (!choices.has(c.index)) {
        choices.set(c.index, { finish: null, content: null, reasoning: null, calls: new Map() });
      }
      const ch = choices.get(c.index);
      const d = c.delta ?? {};
      if (d.content) ch.content = (ch.content ?? "") + d.content;
      for (const key of ["reasoning_content", "reasoning"]) {
        if (typeof d[key] === "string") ch.reasoning = (ch.reasoning ?? "") + d[key];
      }
      for (const tc of d.tool_calls ?? []) {
        if (!ch.calls.has(tc.index)) {
          ch.calls.set(tc.index, { id: null, type: "function", function: { name: "", arguments: "" } });
        }
        const call = ch.calls.get(tc.index);
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.function.name += tc.function.name;
        if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
      }
      if (c.finish_reason) ch.finish = c.finish_reason;
    }
  }
  for (const index of [...choices.keys()].sort((a, b) => a - b)) {
    const ch = choices.get(index);
    const message = { role: "assistant", content: ch.content };
    if (ch.reasoning !== null) message.reasoning_content = ch.reasoning;
    if (ch.calls.size) message.tool_calls = [...ch.calls.keys()].sort((a, b) => a - b).map((i) => ch.calls.get(i));
    out.choices.push({ index, message, finish_reason: ch.finish ?? "stop" });
  }
  if (usage) out.usage = usage;
  return out;
}

async function runChat() {
  const client = await openaiClient();
  const messages = [{ role: "user", content: PROMPTS[args.scenario] }];
  const extra = {};
  if (args.scenario === "tool") {
    extra.tools = [
      {
        type: "function",
        function: { name: "get_weather", description: "Get the current weather for a city.", parameters: WEATHER_SCHEMA },
      },
    ];
  }
  if (args.scenario === "think") extra.reasoning_effort = "low";
  const call = async () =>
    stream
      ? foldChat(
          await client.chat.completions.create({
            model,
            messages,
            stream: true,
            stream_options: { include_usage: true },
            ...extra,
          }),
        )
      : client.chat.completions.create({ model, messages, ...extra });
  let completion = await call();
  let rounds = 1;
  const calls = completion.choices?.[0]?.message?.tool_calls;
  if (args.scenario === "tool" && calls?.length) {
    messages.push({
      role: "assistant",
      content: completion.choices[0].message.content,
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.function.name, arguments: c.function.arguments },
      })),
    });
    for (const c of calls) messages.push({ role: "tool", tool_call_id: c.id, content: TOOL_RESULT });
    completion = await call();
    rounds = 2;
  }
  const message = completion.choices?.[0]?.message;
  const thinking = message?.reasoning_content ?? message?.reasoning ?? "";
  return {
    result: completion,
    usage: completion.usage ?? null,
    text: message?.content ?? "",
    tool_calls: (message?.tool_calls ?? []).map((c) => ({ name: c.function.name, input: parse(c.function.arguments) })),
    thinking: typeof thinking === "string" ? thinking : "",
    rounds,
  };
}

async function runResponses() {
  const client = await openaiClient();
  const input = [{ role: "user", content: PROMPTS[args.scenario] }];
  const extra = {};
  if (args.scenario === "tool") {
    extra.tools = [
      {
        type: "function",
        name: "get_weather",
        description: "Get the current weather for a city.",
        parameters: WEATHER_SCHEMA,
      },
    ];
  }
  if (args.scenario === "think") extra.reasoning = { effort: "low", summary: "auto" };
  const call = async () => {
    if (!stream) return client.responses.create({ model, input, ...extra });
    let final = null;
    for await (const event of await client.responses.create({ model, input, stream: true, ...extra })) {
      if (event.type === "response.completed") final = event.response;
    }
    if (!final) throw new Error("the stream ended without a response.completed event");
    return final;
  };
  let response = await call();
  let rounds = 1;
  const calls = response.output.filter((o) => o.type === "function_call");
  if (args.scenario === "tool" && calls.length) {
    for (const c of calls) {
      input.push(c);
      input.push({ type: "function_call_output", call_id: c.call_id, output: TOOL_RESULT });
    }
    response = await call();
    rounds = 2;
  }
  const text = response.output
    .filter((o) => o.type === "message")
    .flatMap((o) => o.content ?? [])
    .filter((c) => c.type === "output_text")
    .map((c) => c.text)
    .join("");
  const thinking = response.output
    .filter((o) => o.type === "reasoning")
    .flatMap((o) => [...(o.summary ?? []), ...(o.content ?? [])])
    .map((s) => s.text ?? "")
    .join("");
  return {
    result: response,
    usage: response.usage ?? null,
    text: response.output_text ?? text,
    tool_calls: response.output
      .filter((o) => o.type === "function_call")
      .map((o) => ({ name: o.name, input: parse(o.arguments) })),
    thinking,
    rounds,
  };
}

const run = { anthropic: runAnthropic, chat: runChat, responses: runResponses }[args.api];
let out;
let code = 0;
// `--repeat N`: the case N times in this process, a line each (the last printed below).
const repeat = Number(args.repeat || "1");
for (let i = 0; i < repeat && code === 0; i++) {
  if (i > 0) process.stdout.write(JSON.stringify(out) + "\n");
  try {
    out = await run();
  } catch (e) {
    out = { error: { class: e?.constructor?.name ?? typeof e, status: e?.status ?? null, message: String(e?.message ?? e) } };
    code = 3;
  }
}
if (args["raw-out"]) {
  await Promise.all(pending);
  writeFileSync(args["raw-out"], Buffer.concat(bodies.flat()));
}
process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(code));
