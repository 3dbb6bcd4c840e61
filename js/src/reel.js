// What the MCP and LLM halves share: finding the `reel` binary, the record mode, the
// tape directory, and asking `reel ls` whether a tape exists. Every error here says how
// to fix it, since it is what a test author sees first when a test cannot start.

import { accessSync, constants, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, delimiter, join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The record modes, as vcrpy names them. */
export const MODES = ["none", "once", "new_episodes", "all"];

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
 * The `reel` to run: the `reel` option, else `$REEL_BIN`, else the one the `reel-cli`
 * package installed, else `reel` on PATH.
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
  const path = installedReel() ?? lookPath("reel");
  if (path === undefined) {
    throw new ReelSetupError(
      "reel not found: the reel-cli package, which installs it, is not installed where " +
        "reel-test resolves its dependencies, and there is no reel on PATH; install it " +
        "(npm i -D reel-cli), or name a reel binary with REEL_BIN=/path/to/reel or " +
        "{ reel: '/path/to/reel' }",
    );
  }
  return path;
}

const EXE = process.platform === "win32" ? "reel.exe" : "reel";

/**
 * The `reel` of the `reel-cli` package, resolved as Node resolves a dependency of the
 * file `from`: the binary in its platform package (`reel-cli-<platform>-…/bin/reel`, one
 * of its optional dependencies), so no Node process sits between a test and reel, else
 * the package's own `bin` (its launcher). Read from the files, not through `require`:
 * the package exports nothing.
 * @param {string} [from] a file whose dependencies are looked up (default: this one)
 */
export function installedReel(from = fileURLToPath(import.meta.url)) {
  const dir = packageDir("reel-cli", createRequire(from));
  const manifest = dir && readJson(join(dir, "package.json"));
  if (!manifest) return undefined;
  const fromCli = createRequire(join(dir, "package.json"));
  for (const name of Object.keys(manifest.optionalDependencies ?? {})) {
    const platformDir = packageDir(name, fromCli);
    const platform = platformDir && readJson(join(platformDir, "package.json"));
    if (!platform || !runsHere(platform)) continue;
    const binary = join(platformDir, "bin", EXE);
    if (executable(binary)) return binary;
  }
  const launcher = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.reel;
  if (typeof launcher === "string" && executable(resolve(dir, launcher))) {
    return resolve(dir, launcher);
  }
  return undefined;
}

/** Where `name` is installed for `require`'s file: the first `node_modules/<name>`. */
function packageDir(name, require) {
  for (const base of require.resolve.paths(name) ?? []) {
    const dir = join(base, name);
    try {
      if (statSync(join(dir, "package.json")).isFile()) return dir;
    } catch {
      // not in this node_modules
    }
  }
  return undefined;
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** Whether a platform package's `os`, `cpu` and `libc` fields (as npm reads them) fit. */
function runsHere(manifest) {
  const fits = (list, value) => {
    if (!Array.isArray(list) || list.length === 0) return true;
    if (list.includes(`!${value}`)) return false;
    return list.includes(value) || list.every((entry) => entry.startsWith("!"));
  };
  if (!fits(manifest.os, process.platform) || !fits(manifest.cpu, process.arch)) return false;
  if (Array.isArray(manifest.libc) && manifest.libc.length > 0 && process.platform === "linux") {
    const glibc = Boolean(process.report?.getReport().header?.glibcVersionRuntime);
    return fits(manifest.libc, glibc ? "glibc" : "musl");
  }
  return true;
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
      `unknown record mode "${mode}" (from ${from}): use one of ${MODES.join(", ")}`,
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
 * A tape name is a run's label: `reel rec --name NAME` writes `DIR/<time>-NAME.jsonl`.
 * Letters, digits, `_`, `.` and `-` only (reel reads `/` as a path and `~N` as an
 * older run), not starting with `.` or `-`, not ending in `.jsonl`.
 * @param {unknown} tape
 */
export function tapeName(tape) {
  if (
    typeof tape !== "string" ||
    !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(tape) ||
    tape.endsWith(".jsonl")
  ) {
    throw new ReelSetupError(
      `the \`tape\` option must be a run name of letters, digits, '.', '_' and '-', not ` +
        `starting with '.' or '-' nor ending in '.jsonl' (got ${JSON.stringify(tape)}); the ` +
        "tape directory is the `dir` option",
    );
  }
  return tape;
}

/**
 * The recorded runs labelled `name` of this `kind` (`"mcp"` or `"llm"`) in `dir`, newest
 * first, as `reel ls --json` lists them; the first is the tape. A directory that does
 * not exist holds none.
 */
export function runsNamed(reel, dir, name, kind) {
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
  // reel names files the way the directory was given, and it is given absolute.
  return (listing.runs ?? [])
    .filter((run) => run.label === name && run.kind === kind)
    .map((run) => ({ ...run, path: resolve(dir, run.path) }));
}

/**
 * Removes every run labelled `name` of this `kind` but `keep`: a tape recorded again
 * replaces the old one, as a re-recorded cassette does.
 */
export function removeOlder(reel, dir, name, kind, keep) {
  for (const run of runsNamed(reel, dir, name, kind)) {
    if (run.path === keep) continue;
    for (const file of run.files ?? [run.path]) {
      try {
        unlinkSync(resolve(dir, file));
      } catch (e) {
        if (e.code !== "ENOENT") throw e;
      }
    }
  }
}

/**
 * Moves a trace into `dir` as the run `name`: its first (meta) line gets the label,
 * every other line stays byte for byte. The file keeps its timestamp prefix. Returns
 * the new path.
 */
export function relabel(recorded, name, dir) {
  const data = readFileSync(recorded);
  const end = data.indexOf(0x0a);
  const first = end === -1 ? data : data.subarray(0, end);
  const rest = end === -1 ? Buffer.alloc(0) : data.subarray(end);
  const meta = JSON.parse(first.toString("utf8"));
  const oldLabel = typeof meta.label === "string" ? meta.label : "";
  meta.label = name;
  const file = basename(recorded);
  const suffix = `-${oldLabel}.jsonl`;
  const stamp = oldLabel && file.endsWith(suffix) ? file.slice(0, -suffix.length) : file.replace(/\.jsonl$/, "");
  const target = join(dir, `${stamp}-${name}.jsonl`);
  const temporary = join(dir, `.${basename(target)}.tmp`);
  writeFileSync(temporary, Buffer.concat([Buffer.from(JSON.stringify(meta), "utf8"), rest]));
  renameSync(temporary, target);
  unlinkSync(recorded);
  return target;
}

/**
 * `[command, ...args]` from the `server` option, the program made absolute (found on
 * PATH, or relative to the working directory): reel starts it, maybe elsewhere.
 */
export function commandLine(server) {
  let words;
  if (Array.isArray(server) && server.length > 0 && server.every((w) => typeof w === "string")) {
    words = server;
  } else if (server && typeof server === "object" && typeof server.command === "string") {
    const args = server.args ?? [];
    if (Array.isArray(args) && args.every((w) => typeof w === "string")) {
      words = [server.command, ...args];
    }
  }
  if (words === undefined) {
    throw new ReelSetupError(
      "the `server` option must be the live server's command line: an array " +
        "['node', 'server.js'] or { command, args } as StdioClientTransport takes",
    );
  }
  const [program, ...args] = words;
  const found = program.includes("/") ? resolve(program) : lookPath(program);
  if (found === undefined || !executable(found)) {
    throw new ReelSetupError(
      `the live server ${JSON.stringify(program)} is not an executable file or on PATH; it is ` +
        "needed to record the tape",
    );
  }
  return [found, ...args];
}

/** Milliseconds from an option, with a default; refuses what is not a positive number. */
export function millis(value, fallback, name) {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0)) {
    throw new ReelSetupError(`the \`${name}\` option must be a positive number of milliseconds`);
  }
  return value;
}
