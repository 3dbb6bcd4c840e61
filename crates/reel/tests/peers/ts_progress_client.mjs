// reel's interop test client on the TypeScript SDK (@modelcontextprotocol/sdk 1.x).
//
//     node ts_progress_client.mjs NODE_MODULES CALLS stdio -- SERVER_CMD [ARGS...]
//     node ts_progress_client.mjs NODE_MODULES CALLS http URL
//
// Connects to server-everything (over stdio to SERVER_CMD, or Streamable HTTP to URL),
// calls `trigger-long-running-operation` (3 steps) CALLS times one after the other with
// a progress callback, and prints one line per call, `CALL <i> PROGRESS <n> <values>`,
// then `PROGRESS TOTAL <n>`. The SDK drops a call's progress handler as soon as its
// result arrives while it runs notification handlers a microtask later: progress that
// reaches it in the same read as the result is lost. A replay must deliver it as the
// live server did, so each call's callbacks all fire.
//
// The SDK is loaded from NODE_MODULES (the peers' install), not from this directory.

import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [nodeModules, callsArg, mode, ...rest] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");

let transport;
if (mode === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const cmd = rest[0] === "--" ? rest.slice(1) : rest;
  transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error(`unknown mode ${mode}: stdio or http`);
  process.exit(64);
}

const client = new Client({ name: "reel-ts-progress-client", version: "1.0.0" });
// A progress notification whose handler is gone is reported here; it is not fatal.
client.onerror = (e) => console.error(`client error: ${e.message}`);
await client.connect(transport);

let total = 0;
const calls = Number(callsArg);
for (let i = 1; i <= calls; i++) {
  const seen = [];
  const r = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => seen.push(p.progress) },
  );
  if (!r.content?.[0]?.text?.startsWith("Long running operation completed")) {
    console.error(`unexpected result: ${JSON.stringify(r)}`);
    process.exit(1);
  }
  total += seen.length;
  console.log(`CALL ${i} PROGRESS ${seen.length} ${seen.join(",")}`);
}
console.log(`PROGRESS TOTAL ${total}`);
await client.close();
