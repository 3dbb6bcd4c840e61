// MCP over stdio: the command line a client starts instead of the live server. On replay
// it is `reel play TAPE --report FILE`; on record, `reel rec --dir DIR --name NAME --
// SERVER…`; in record mode new_episodes, `reel play TAPE --subset TOOLS --record TMP
// --report FILE -- SERVER…`. The client (the TypeScript SDK's StdioClientTransport, or
// any client that takes a command) owns the process; all this side can see is what reel
// leaves behind once the client closed it: play's report file, or the finished trace.

import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  ReelSetupError,
  commandLine,
  findReel,
  millis,
  recordMode,
  relabel,
  removeOlder,
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
 * What this run does with the tape: `"replay"`, `"record"` or `"new_episodes"`, from the
 * record mode and whether the tape exists (`undefined`: mode none without a tape).
 */
function choose(mode, exists) {
  if (mode === "all") return "record";
  if (mode === "new_episodes") return exists ? "new_episodes" : "record";
  if (exists) return "replay";
  return mode === "once" ? "record" : undefined;
}

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
  const before = runsNamed(reel, dir, name, "mcp");
  const tape = before[0];
  let does = choose(mode, tape !== undefined);

  if (does === undefined) {
    throw new ReelSetupError(
      `no tape "${name}" in ${dir}, and record mode "none" only replays: record it ` +
        `once with the live server (REEL_RECORD_MODE=once, or mode: "once" with a \`server\`)`,
    );
  }
  if (does !== "replay" && options.server === undefined) {
    const why =
      does === "new_episodes"
        ? 'record mode "new_episodes" sends the calls the tape does not hold to the live server, and'
        : mode === "all"
          ? 'record mode "all" records, and'
          : `there is no tape "${name}" in ${dir} to replay, so it must record, and`;
    throw new ReelSetupError(`${why} no live \`server\` command was given to record from`);
  }
  const live = does === "replay" ? [] : commandLine(options.server);
  const tools = does === "new_episodes" ? toolsCalled(tape.path) : [];
  // Nothing on the tape that --subset could serve: every call is new.
  if (does === "new_episodes" && tools.length === 0) does = "record";

  const color = ["--color", "never"];
  const common = {
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    tape: name,
    dir,
  };
  if (does === "record") {
    const args = ["rec", ...color, "--dir", dir, "--name", name, ...(options.recordArgs ?? []), "--", ...live];
    const known = new Set(before.map((run) => run.path));
    let outcome;
    const finish = () => {
      outcome ??= waitForRecording(reel, dir, name, known, timeoutMs);
      return outcome;
    };
    return { command: reel, args, ...common, mode: "record", finish, check: finish };
  }

  // Only a name: nothing is left behind when the client never starts the server.
  const reportPath = join(tmpdir(), `reel-play-report-${randomUUID()}.json`);
  const args = ["play", tape.path, ...color, "--report", reportPath];
  // Where --record writes the new-episodes session (reel makes it); adopted or removed.
  const recordDir = join(tmpdir(), `reel-new-episodes-${randomUUID()}`);
  if (does === "new_episodes") args.push("--subset", tools.join(","), "--record", recordDir);
  args.push(...(options.playArgs ?? []));
  if (does === "new_episodes") args.push("--", ...live);
  const failOnUnused = options.failOnUnused === true;
  const note =
    does === "new_episodes"
      ? `record mode "new_episodes" answers calls of the tools the tape holds (${tools.join(", ")}) ` +
        'from the tape only: a call of one of them that was not recorded is a miss; record the ' +
        'tape again with mode "all"'
      : undefined;
  let outcome;
  const finish = () => {
    outcome ??= readReport(reportPath, name, timeoutMs, failOnUnused, note)
      .then((report) => (does === "new_episodes" ? adoptNewEpisodes(reel, report, name, dir) : report))
      .finally(() => rmSync(recordDir, { recursive: true, force: true }));
    return outcome;
  };
  return {
    command: reel,
    args,
    // What play prints on stderr is in its report, and finish() throws it.
    stderr: "ignore",
    ...common,
    mode: does,
    reportPath,
    finish,
    check: finish,
  };
}

/** Waits for play's report, then judges it: resolves with it when clean, else throws. */
async function readReport(path, name, timeoutMs, failOnUnused, note) {
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
  if (note) lines.push(note);
  throw new ReelReplayError(lines.join("\n"), report);
}

/**
 * A clean new-episodes session becomes the tape: the trace `reel play --record` wrote,
 * labelled with the tape's name, in the tape directory, the older runs of the name gone.
 * Resolves with the new tape's run.
 */
function adoptNewEpisodes(reel, report, name, dir) {
  const recorded = report.summary?.recorded;
  if (typeof recorded !== "string" || !existsSync(recorded)) {
    throw new ReelReplayError(
      `reel play --record: the new-episodes run of tape "${name}" was not recorded ` +
        `(report summary: ${JSON.stringify(report.summary)})`,
      report,
    );
  }
  const adopted = relabel(recorded, name, dir);
  removeOlder(reel, dir, name, "mcp", adopted);
  return runsNamed(reel, dir, name, "mcp")[0];
}

/** Waits until `reel ls` shows a new, finished run named `name`; it replaces the older. */
async function waitForRecording(reel, dir, name, known, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fresh = runsNamed(reel, dir, name, "mcp").filter((run) => !known.has(run.path));
    const done = fresh.find((run) => run.countsFrom === "end");
    if (done) {
      removeOlder(reel, dir, name, "mcp", done.path);
      return done;
    }
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

/** The names of the tools the client called on a tape (its `tools/call` requests), sorted. */
export function toolsCalled(trace) {
  const names = new Set();
  for (const line of readFileSync(trace, "utf8").split("\n")) {
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (record === null || typeof record !== "object" || record.dir !== "in") continue;
    const messages = Array.isArray(record.raw) ? record.raw : [record.raw];
    for (const message of messages) {
      const tool = message?.method === "tools/call" ? message.params?.name : undefined;
      if (typeof tool === "string") names.add(tool);
    }
  }
  return [...names].sort();
}
