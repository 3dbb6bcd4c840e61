// @copilotkit/aimock (npm, 1.43.0) scripted for reel's `reel llm` tests: answers
// llm_client.py / llm_client.mjs's scenarios on every API it serves from one port.
//
//     node llm_aimock.mjs [--port P] [--latency MS] [--chunk-size N]
//                         [--truncate-after-chunks N] [--disconnect-after-ms MS]
//                         [--signature SIG]
//
// Prints `listening on http://127.0.0.1:PORT` once it serves (port 0, the default, picks
// a free one). aimock serves OpenAI chat and Responses and Anthropic Messages all under
// `/v1`, so `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1` and
// `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`. Models:
// - `reel-text`: plain text;
// - `reel-tool`: a `get_weather({"city": "Paris"})` call, then, once a tool result is in
//   the request, text;
// - `reel-think`: reasoning plus text (Anthropic: a `thinking` block with a signature,
//   streamed as thinking_delta then signature_delta; chat: `reasoning_content`;
//   Responses: a reasoning item with a summary);
// - anything else: 404 (aimock's "no fixture matched").
// `--latency` paces streams (ms between SSE events), `--chunk-size` sets how many
// characters of text go in one delta (aimock's default is 20), and the two fault
// options cut every stream: cleanly after N events, or by destroying the socket.
//
// aimock is loaded from REEL_PEERS/node_modules (default: the workspace's `.peers/`).

import { pathToFileURL, fileURLToPath } from "node:url";
import { join, dirname } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const peers = process.env.REEL_PEERS || join(here, "../../../../.peers");
const { LLMock } = await import(
  pathToFileURL(join(peers, "node_modules/@copilotkit/aimock/dist/index.js")).href
);

const opts = { port: 0, latency: 0, chunkSize: 20 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const key = argv[i];
  const val = argv[++i];
  if (val === undefined) usage(`${key} needs a value`);
  switch (key) {
    case "--port": opts.port = Number(val); break;
    case "--latency": opts.latency = Number(val); break;
    case "--chunk-size": opts.chunkSize = Number(val); break;
    case "--truncate-after-chunks": opts.truncateAfterChunks = Number(val); break;
    case "--disconnect-after-ms": opts.disconnectAfterMs = Number(val); break;
    case "--signature": opts.signature = val; break;
    default: usage(`unknown option ${key}`);
  }
}

function usage(msg) {
  console.error(`llm_aimock.mjs: ${msg}`);
  process.exit(64);
}

const faults = {};
if (opts.truncateAfterChunks !== undefined) faults.truncateAfterChunks = opts.truncateAfterChunks;
if (opts.disconnectAfterMs !== undefined) faults.disconnectAfterMs = opts.disconnectAfterMs;

const think = { content: "17 * 23 = 391.", reasoning: "17 * 20 = 340 and 17 * 3 = 51; 340 + 51 = 391." };
if (opts.signature) think.reasoningSignature = opts.signature;

const mock = new LLMock({
  port: opts.port,
  host: "127.0.0.1",
  latency: opts.latency,
  chunkSize: opts.chunkSize,
  logLevel: "warn",
});
mock.addFixtures([
  { match: { model: "reel-text" }, response: { content: "Hello from the mock model." }, ...faults },
  {
    match: { model: "reel-tool", hasToolResult: true },
    response: { content: "It is sunny, 21 C in Paris." },
    ...faults,
  },
  {
    match: { model: "reel-tool" },
    response: { toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }] },
    ...faults,
  },
  { match: { model: "reel-think" }, response: think, ...faults },
]);
const url = await mock.start();
console.log(`listening on ${url.replace("localhost", "127.0.0.1").replace(/\/$/, "")}`);

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => mock.stop().finally(() => process.exit(0)));
}
