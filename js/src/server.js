// MCP over stdio: the command line a client starts instead of the live server. On replay
// it is `reel play NAME --dir DIR --report FILE`; on record, `reel rec --dir DIR --name
// NAME -- SERVER…`. The client (the TypeScript SDK's StdioClientTransport, or any client
// that takes a command) owns the process; all this side can see is what reel leaves
// behind once the client closed it: play's report file, or the finished trace.

import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  ReelSetupError,
  commandLine,
  findReel,
  millis,
  recordMode,
  runsNamed,
  tapeDir,
  tapeName,
} from "./reel.js";

/** The error `finish()` throws when a replay was not clean; `report` is play's report. */
export class ReelReplayError extends Error {
  constructor(message, report) {
    super(message);
    this.name = "ReelReplayError";
    this.report = report;
  }
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/**
 * A stdio MCP server replayed from a tape (or recorded to one), for
 * `new StdioClientTransport(reelServer({...}))`.
 */
export function reelServer(options = {}) {
  const reel = findReel(options.reel);
  const mode = recordMode(options.mode);
  const name = tapeName(options.tape);
  const dir = tapeDir(options.dir);
  const timeoutMs = millis(options.timeoutMs, 10_000, "timeoutMs");
  const before = runsNamed(reel, dir, name);
  const record = mode === "all" || (mode === "once" && before.length === 0);

  if (!record && before.length === 0) {
    throw new ReelSetupError(
      `no tape "${name}" in ${dir}, and record mode "none" only replays: record it ` +
        `once with the live server (REEL_RECORD_MODE=once, or mode: "once" with a \`server\`)`,
    );
  }
  if (record && options.server === undefined) {
    const why = mode === "all" ? 'record mode "all" records' : `there is no tape "${name}" in ${dir} to replay, so it`;
    throw new ReelSetupError(
      `${why} must record, and no live \`server\` command was given to record from`,
    );
  }

  const color = ["--color", "never"];
  if (record) {
    const live = commandLine(options.server);
    const args = ["rec", ...color, "--dir", dir, "--name", name, ...(options.recordArgs ?? []), "--", ...live];
    const known = new Set(before.map((run) => run.path));
    const finish = () => waitForRecording(reel, dir, name, known, timeoutMs);
    return {
      command: reel,
      args,
      ...(options.env ? { env: options.env } : {}),
      mode: "record",
      tape: name,
      dir,
      finish,
      check: finish,
    };
  }

  // Only a name: nothing is left behind when the client never starts the server.
  const reportPath = join(tmpdir(), `reel-play-report-${randomUUID()}.json`);
  const args = ["play", name, ...color, "--dir", dir, "--report", reportPath, ...(options.playArgs ?? [])];
  let outcome;
  const finish = () => {
    outcome ??= readReport(reportPath, name, timeoutMs, options.failOnUnused === true);
    return outcome;
  };
  return {
    command: reel,
    args,
    // What play prints on stderr is in its report, and finish() throws it.
    stderr: "ignore",
    ...(options.env ? { env: options.env } : {}),
    mode: "replay",
    tape: name,
    dir,
    reportPath,
    finish,
    check: finish,
  };
}

/** Waits for play's report, then judges it: resolves with it when clean, else throws. */
async function readReport(path, name, timeoutMs, failOnUnused) {
  const deadline = Date.now() + timeoutMs;
  let text;
  for (;;) {
    try {
      text = readFileSync(path, "utf8");
      break;
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
    }
    if (Date.now() > deadline) {
      throw new ReelReplayError(
        `reel play wrote no report for tape "${name}" within ${timeoutMs} ms: close the ` +
          `client (await client.close()) before finish(), so reel sees the end of its input`,
        undefined,
      );
    }
    await sleep(25);
  }
  rmSync(path, { force: true });
  let report;
  try {
    report = JSON.parse(text);
  } catch (e) {
    throw new ReelReplayError(`reel play's report is not JSON (${e.message}): ${text}`, undefined);
  }
  if (report.format !== "reel-play-report/1") {
    throw new ReelReplayError(
      `reel play's report has format ${JSON.stringify(report.format)}, not reel-play-report/1: ` +
        "this package and reel do not match",
      report,
    );
  }
  const unused = report.summary?.unused_total ?? 0;
  if (report.verdict === "clean" && !(failOnUnused && unused > 0)) return report;
  const what =
    report.verdict === "clean"
      ? `${unused} recorded exchange(s) unused (failOnUnused)`
      : `verdict ${report.verdict}, exit ${report.exit}`;
  const lines = [`replay of tape "${name}" was not clean (${what})`];
  if (report.error) lines.push(`reel play: ${report.error}`);
  if (report.stderr) lines.push(report.stderr.trimEnd());
  throw new ReelReplayError(lines.join("\n"), report);
}

/** Waits until `reel ls` shows a new, finished run named `name`. */
async function waitForRecording(reel, dir, name, known, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fresh = runsNamed(reel, dir, name).filter((run) => !known.has(run.path));
    const done = fresh.find((run) => run.countsFrom === "end");
    if (done) return done;
    if (Date.now() > deadline) {
      throw new ReelReplayError(
        fresh.length === 0
          ? `reel rec left no trace "${name}" in ${dir} within ${timeoutMs} ms: did the client start the server?`
          : `the recording ${fresh[0].path} did not end within ${timeoutMs} ms: close the client before finish()`,
        undefined,
      );
    }
    await sleep(50);
  }
}
