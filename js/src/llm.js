// LLM APIs: `reel llm` as a loopback provider. On replay it serves a tape (`--play`),
// on record it forwards to `upstream` (or the providers' APIs) and writes one. Unlike
// the MCP side this package owns the process, so the verdict is its exit status: 3
// means it answered some request with a miss, and its stderr says which and why.
// `reel llm` cannot mix recorded and live answers, so record mode new_episodes replays
// a tape that exists and records one that does not.

import { spawn } from "node:child_process";

import {
  ReelSetupError,
  findReel,
  millis,
  recordMode,
  removeOlder,
  runsNamed,
  tapeDir,
  tapeName,
} from "./reel.js";
import { ReelReplayError } from "./server.js";

const LISTENING = /reel: listening on (http:\/\/\S+)/;

/**
 * Starts `reel llm` replaying (or recording) tape `tape`; resolves once it listens.
 */
export async function reelLlm(options = {}) {
  const reel = findReel(options.reel);
  const mode = recordMode(options.mode);
  const name = tapeName(options.tape);
  const dir = tapeDir(options.dir);
  const startMs = millis(options.startTimeoutMs, 10_000, "startTimeoutMs");
  const stopMs = millis(options.timeoutMs, 10_000, "timeoutMs");
  const existing = runsNamed(reel, dir, name, "llm");
  const tape = existing[0];
  const record = mode === "all" || (mode !== "none" && tape === undefined);
  if (!record && tape === undefined) {
    throw new ReelSetupError(
      `no LLM tape "${name}" in ${dir}, and record mode "none" only replays: record it ` +
        `once against the live API (REEL_RECORD_MODE=once, or mode: "once" with an \`upstream\`)`,
    );
  }
  if (options.upstream !== undefined && typeof options.upstream !== "string") {
    throw new ReelSetupError("the `upstream` option must be a URL string, e.g. http://127.0.0.1:8080");
  }
  const upstream = options.upstream ?? (process.env.REEL_LLM_UPSTREAM || undefined);
  const args = ["llm", "--color", "never"];
  if (record) {
    args.push("--dir", dir, "--name", name);
    if (upstream) args.push("--upstream", upstream);
  } else {
    args.push("--play", tape.path);
  }
  args.push(...(options.args ?? []));

  const child = spawn(reel, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const exited = new Promise((done) => {
    child.on("exit", (code, signal) => done({ code, signal }));
    child.on("error", (error) => done({ code: null, signal: null, error }));
  });
  child.stderr.setEncoding("utf8");
  const baseURL = await new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new ReelSetupError(`reel llm did not listen within ${startMs} ms:\n${stderr}`));
    }, startMs);
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const m = LISTENING.exec(stderr);
      if (m) {
        clearTimeout(timer);
        done(m[1].replace(/\/$/, ""));
      }
    });
    exited.then(({ code, signal, error }) => {
      clearTimeout(timer);
      const why = error ? error.message : `exit ${code ?? `signal ${signal}`}`;
      fail(new ReelSetupError(`reel llm ended before it listened (${why}): \`${reel} ${args.join(" ")}\`\n${stderr}`));
    });
  });

  const missNote =
    mode === "new_episodes" && !record
      ? 'record mode "new_episodes" replays an LLM tape that exists (reel llm cannot mix ' +
        'recorded and live calls); record the tape again with mode "all"'
      : undefined;
  let stopped;
  return {
    baseURL,
    mode: record ? "record" : "replay",
    tape: name,
    dir,
    get stderr() {
      return stderr;
    },
    stop() {
      stopped ??= stop(child, exited, stopMs, name, () => stderr, missNote).then((done) => {
        if (record) replaceOlder(reel, dir, name, existing);
        return done;
      });
      return stopped;
    },
  };
}

/** After a recording: the new run is the tape, the runs that were there before go. */
function replaceOlder(reel, dir, name, before) {
  const known = new Set(before.map((run) => run.path));
  const fresh = runsNamed(reel, dir, name, "llm").find((run) => !known.has(run.path));
  if (fresh === undefined) {
    throw new ReelReplayError(`reel llm recorded, but no tape "${name}" is in ${dir}`);
  }
  removeOlder(reel, dir, name, "llm", fresh.path);
}

async function stop(child, exited, timeoutMs, name, stderr, missNote) {
  child.kill("SIGTERM");
  let timer;
  const late = new Promise((done) => {
    timer = setTimeout(() => done(undefined), timeoutMs);
  });
  const ended = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (ended === undefined) {
    child.kill("SIGKILL");
    await exited;
    throw new ReelReplayError(`reel llm did not exit within ${timeoutMs} ms of SIGTERM:\n${stderr()}`);
  }
  if (ended.code === 0) return { exit: 0, stderr: stderr() };
  const what =
    ended.code === 3
      ? `LLM tape "${name}" answered requests with misses (exit 3)`
      : `reel llm for tape "${name}" failed (${ended.code === null ? `signal ${ended.signal}` : `exit ${ended.code}`})`;
  const lines = [what, stderr().trimEnd()];
  if (ended.code === 3 && missNote) lines.push(missNote);
  throw new ReelReplayError(lines.join("\n"), { exit: ended.code, stderr: stderr() });
}
