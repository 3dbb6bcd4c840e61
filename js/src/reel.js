// What the MCP and LLM halves share: finding the `reel` binary, the record mode, the
// tape directory, and asking `reel ls` whether a tape exists. Every error here says how
// to fix it, since it is what a test author sees first when a test cannot start.

import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { spawnSync } from "node:child_process";

/** The record modes, as vcrpy names them. */
export const MODES = ["none", "once", "all", "new_episodes"];

/** The error a test author gets for a setup mistake (bad option, no reel, no tape). */
export class ReelSetupError extends Error {
  constructor(message) {
    super(message);
    this.name = "ReelSetupError";
  }
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The `reel` to run: the `reel` option, else `$REEL_BIN`, else `reel` on PATH.
 * @param {string | undefined} option
 */
export function findReel(option) {
  const given = option ?? (process.env.REEL_BIN || undefined);
  if (given !== undefined) {
    const from = option !== undefined ? "the `reel` option" : "REEL_BIN";
    const path = given.includes("/") ? resolve(given) : lookPath(given);
    if (path === undefined || !executable(path)) {
      throw new ReelSetupError(`reel not found: ${from} names ${given}, which is not an executable file`);
    }
    return path;
  }
  const path = lookPath("reel");
  if (path === undefined) {
    throw new ReelSetupError(
      "reel not found: pass { reel: '/path/to/reel' }, set REEL_BIN, or put reel on PATH " +
        "(from a reel checkout: cargo install --path crates/reel --locked)",
    );
  }
  return path;
}

function lookPath(name) {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The record mode: the `mode` option, else `$REEL_RECORD_MODE`, else `once`.
 * @param {string | undefined} option
 */
export function recordMode(option) {
  const fromEnv = process.env.REEL_RECORD_MODE || undefined;
  const mode = option ?? fromEnv ?? "once";
  if (!MODES.includes(mode)) {
    const from = option !== undefined ? "the `mode` option" : "REEL_RECORD_MODE";
    throw new ReelSetupError(
      `unknown record mode "${mode}" (from ${from}): use one of none, once, all`,
    );
  }
  if (mode === "new_episodes") {
    throw new ReelSetupError(
      'record mode "new_episodes" is not supported: reel play answers each request from the ' +
        "tape or reports it as a miss, and cannot send just the unrecorded requests on to a " +
        "live server (its --subset forwards whole tools, not new calls); re-record the tape " +
        'with mode "all" (REEL_RECORD_MODE=all)',
    );
  }
  return mode;
}

/**
 * The absolute tape directory: the `dir` option, else `$REEL_DIR`, else `./tapes`.
 * @param {string | undefined} option
 */
export function tapeDir(option) {
  return resolve(option ?? (process.env.REEL_DIR || "tapes"));
}

/**
 * A tape name is a run name: `reel rec --name NAME` writes `DIR/<time>-NAME.jsonl`
 * and `reel play NAME` plays the newest.
 * @param {unknown} tape
 */
export function tapeName(tape) {
  if (typeof tape !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(tape)) {
    throw new ReelSetupError(
      `the \`tape\` option must be a run name of letters, digits, '.', '_' and '-' ` +
        `(got ${JSON.stringify(tape)}); the tape directory is the \`dir\` option`,
    );
  }
  return tape;
}

/**
 * The recorded runs named `name` in `dir`, newest first, as `reel ls --json` lists them.
 * A directory that does not exist holds none.
 */
export function runsNamed(reel, dir, name) {
  try {
    if (!statSync(dir).isDirectory()) return [];
  } catch {
    return [];
  }
  const out = spawnSync(reel, ["ls", "--dir", dir, "--json", "--color", "never"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (out.error || out.status !== 0) {
    throw new ReelSetupError(
      `\`${reel} ls --dir ${dir} --json\` failed (${out.error?.message ?? `exit ${out.status}`}): ${out.stderr ?? ""}`,
    );
  }
  let listing;
  try {
    listing = JSON.parse(out.stdout);
  } catch (e) {
    throw new ReelSetupError(`\`reel ls --json\` printed no JSON (${e.message}): ${out.stdout}`);
  }
  return (listing.runs ?? []).filter((run) => run.label === name);
}

/** `[command, ...args]` from the `server` or `upstream` style options. */
export function commandLine(server) {
  if (Array.isArray(server) && server.length > 0 && server.every((w) => typeof w === "string")) {
    return server;
  }
  if (server && typeof server === "object" && typeof server.command === "string") {
    const args = server.args ?? [];
    if (Array.isArray(args) && args.every((w) => typeof w === "string")) {
      return [server.command, ...args];
    }
  }
  throw new ReelSetupError(
    "the `server` option must be the live server's command line: an array " +
      "['node', 'server.js'] or { command, args } as StdioClientTransport takes",
  );
}

/** Milliseconds from an option, with a default; refuses what is not a positive number. */
export function millis(value, fallback, name) {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0)) {
    throw new ReelSetupError(`the \`${name}\` option must be a positive number of milliseconds`);
  }
  return value;
}

