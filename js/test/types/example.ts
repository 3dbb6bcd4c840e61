// A TypeScript test file's use of the package: every export, every option, and the
// mistakes the types must refuse (each `@ts-expect-error` fails the check when the
// line below it compiles). Checked by `npm run typecheck`; never run.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ReelReplayError,
  ReelSetupError,
  findReel,
  recordMode,
  reelLlm,
  reelServer,
  type PlayReport,
  type RecordMode,
  type RecordedRun,
  type ReelLlm,
  type ReelLlmOptions,
  type ReelServer,
  type ReelServerOptions,
  type TapeOptions,
} from "reel-test";

const modes: RecordMode[] = ["none", "once", "new_episodes", "all"];
// @ts-expect-error: not a record mode
const badMode: RecordMode = "sometimes";

const shared: TapeOptions = { tape: "weather", dir: "test/tapes", mode: "once", reel: "/usr/local/bin/reel", timeoutMs: 5_000 };
// @ts-expect-error: `tape` is required
const noTape: TapeOptions = { dir: "test/tapes" };

const serverOptions: ReelServerOptions = {
  ...shared,
  server: ["node", "server.js"],
  env: { PATH: "/usr/bin" },
  cwd: "/srv",
  playArgs: ["--strict"],
  recordArgs: ["--redact", "acct-[0-9]+"],
  failOnUnused: true,
};
const alsoServer: ReelServerOptions = { tape: "w", server: { command: "node", args: ["server.js"] } };
// @ts-expect-error: a command line is strings
const badServer: ReelServerOptions = { tape: "w", server: ["node", 1] };
// @ts-expect-error: playArgs are strings
const badPlayArgs: ReelServerOptions = { tape: "w", playArgs: "--strict" };

async function mcp(): Promise<void> {
  const server: ReelServer = reelServer(serverOptions);
  const where: [string, string, string, string[], string | undefined] = [server.tape, server.dir, server.command, server.args, server.cwd];
  // What reelServer returns is what the SDK's stdio transport takes.
  const client = new Client({ name: "tests", version: "1.0.0" });
  await client.connect(new StdioClientTransport(server));
  await client.close();
  // `mode` says what finish() resolves with.
  if (server.mode === "replay") {
    const report: PlayReport = await server.finish();
    const verdict: "clean" | "misses" | "client-drift" | "usage" | "error" = report.verdict;
    const counts: [number | undefined, number | undefined, string | undefined] = [
      report.summary?.missed, report.summary?.unused_total, report.summary?.recorded,
    ];
    const path: string = server.reportPath;
    void [verdict, counts, path, report.exit, report.stderr, report.error, server.stderr];
  } else {
    const run: RecordedRun = await server.finish();
    const facts: [string, string[], string, string, string, number | null] = [
      run.path, run.files, run.label, run.kind, run.startedAt, run.exitCode,
    ];
    if (server.mode === "new_episodes") void server.reportPath;
    // @ts-expect-error: a recording has no report
    void server.reportPath;
    void facts;
  }
  const again: PlayReport | RecordedRun = await server.check();
  void [where, again, alsoServer, modes];
}

const llmOptions: ReelLlmOptions = {
  ...shared,
  upstream: "http://127.0.0.1:8080",
  args: ["--ignore", "/system"],
  startTimeoutMs: 5_000,
};
// @ts-expect-error: upstream is a URL string
const badUpstream: ReelLlmOptions = { tape: "t", upstream: 8080 };

async function llm(): Promise<void> {
  const running: ReelLlm = await reelLlm(llmOptions);
  const url: string = running.baseURL;
  const mode: "replay" | "record" = running.mode;
  const stderr: string = running.stderr;
  // @ts-expect-error: stderr is read-only
  running.stderr = "";
  const stopped: { exit: 0; stderr: string } = await running.stop();
  void [url, mode, stderr, stopped, running.tape, running.dir];
}

function errors(error: unknown): string {
  if (error instanceof ReelReplayError) {
    const report = error.report;
    const exit: number | null | undefined = report?.exit;
    const name: "ReelReplayError" = error.name;
    return `${name} ${exit} ${error.message}`;
  }
  if (error instanceof ReelSetupError) {
    const name: "ReelSetupError" = error.name;
    return `${name} ${error.message}`;
  }
  return String(error);
}

const reel: string = findReel();
const named: string = findReel("/usr/local/bin/reel");
const mode: RecordMode = recordMode();
const given: RecordMode = recordMode("new_episodes");
// @ts-expect-error: recordMode takes a record mode
recordMode("sometimes");
// @ts-expect-error: reelServer needs options
reelServer();

void [mcp, llm, errors, reel, named, mode, given, badMode, noTape, badServer, badPlayArgs, badUpstream];
