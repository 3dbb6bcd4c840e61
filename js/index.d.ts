// Types for reel-test (the package is plain JavaScript; see README.md).

/** vcrpy's record modes (see README.md, "Record modes"). */
export type RecordMode = "none" | "once" | "new_episodes" | "all";

/** Options both halves share. */
export interface TapeOptions {
  /**
   * The tape's name: the label of its runs (`reel rec --name NAME`); the newest run of the
   * name is the tape. Letters, digits, `_`, `.` and `-`, not starting with `.` or `-`.
   */
  tape: string;
  /** The tape directory (default: `$REEL_DIR`, else `./tapes`), made absolute. */
  dir?: string;
  /** The record mode (default: `$REEL_RECORD_MODE`, else `"once"`). */
  mode?: RecordMode;
  /**
   * The `reel` binary (default: `$REEL_BIN`, else the one the `reel-cli` package
   * installed, else `reel` on PATH).
   */
  reel?: string;
  /** How long `finish()` / `stop()` wait for reel, in ms (default 10000). */
  timeoutMs?: number;
}

export interface ReelServerOptions extends TapeOptions {
  /**
   * The live server's command line, used when recording and in mode `new_episodes`:
   * `["node", "server.js"]` or `{ command, args }`.
   */
  server?: string[] | { command: string; args?: string[] };
  /** Passed on as the transport's `env` (the SDK then uses it instead of its default environment). */
  env?: Record<string, string>;
  /** Passed on as the transport's `cwd` (the live server runs there when recording). */
  cwd?: string;
  /** Extra flags for `reel play`, also in mode `new_episodes` (e.g. `["--strict"]`, `["--ignore", "/params/arguments/now"]`). */
  playArgs?: string[];
  /** Extra flags for `reel rec` (e.g. `["--redact", "secret-[0-9]+"]`). */
  recordArgs?: string[];
  /** Also fail `finish()` when recorded exchanges were never asked for (default false). */
  failOnUnused?: boolean;
}

/** `reel play --report`'s document (format `reel-play-report/1`). */
export interface PlayReport {
  format: "reel-play-report/1";
  exit: number;
  verdict: "clean" | "misses" | "client-drift" | "usage" | "error";
  summary: {
    answered: number;
    missed: number;
    client_drift: number;
    unused_total: number;
    unused: { method: string; location: string; params: string }[];
    /** With `reel play --record`: the trace it wrote. */
    recorded?: string;
    [count: string]: unknown;
  } | null;
  error: string | null;
  stderr: string;
}

/** A run as `reel ls --json` lists it (what `finish()` resolves to after recording). */
export interface RecordedRun {
  /** The trace, absolute. */
  path: string;
  files: string[];
  label: string;
  kind: string;
  startedAt: string;
  exitCode: number | null;
  [member: string]: unknown;
}

/** What every {@link ReelServer} holds: the command line, and where the tape is. */
export interface ReelServerBase {
  /** The absolute path of reel. */
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  tape: string;
  /** The absolute tape directory. */
  dir: string;
}

/** Replays the tape with `reel play`, offline. */
export interface ReplayServer extends ReelServerBase {
  mode: "replay";
  /** play's stderr goes to its report, so the transport need not show it. */
  stderr: "ignore";
  /** Where `reel play` writes its report. */
  reportPath: string;
  /**
   * Call after the client closed: waits for play's report and resolves with it when the
   * replay was clean, else throws a {@link ReelReplayError} whose message is reel's miss
   * report.
   */
  finish(): Promise<PlayReport>;
  /** The same as `finish()`. */
  check(): Promise<PlayReport>;
}

/** Records the live server with `reel rec`. */
export interface RecordServer extends ReelServerBase {
  mode: "record";
  /** Call after the client closed: waits until the new trace has ended; resolves with its run. */
  finish(): Promise<RecordedRun>;
  /** The same as `finish()`. */
  check(): Promise<RecordedRun>;
}

/**
 * Record mode `new_episodes` with a tape: `reel play --subset`, the calls of the tools the
 * tape holds answered from it, everything else by the live server; the session becomes the
 * new tape.
 */
export interface NewEpisodesServer extends ReelServerBase {
  mode: "new_episodes";
  /** play's stderr goes to its report, so the transport need not show it. */
  stderr: "ignore";
  /** Where `reel play` writes its report. */
  reportPath: string;
  /**
   * Call after the client closed: judges play's report as a replay's (throwing a
   * {@link ReelReplayError} when not clean), then resolves with the new tape's run.
   */
  finish(): Promise<RecordedRun>;
  /** The same as `finish()`. */
  check(): Promise<RecordedRun>;
}

/**
 * What `reelServer` returns: hand it to `new StdioClientTransport(...)`. `mode` says what
 * this run does with the tape, and what `finish()` resolves with.
 */
export type ReelServer = ReplayServer | RecordServer | NewEpisodesServer;

/** A stdio MCP server replayed from (or recorded to) a tape. Throws {@link ReelSetupError}. */
export function reelServer(options: ReelServerOptions): ReelServer;

export interface ReelLlmOptions extends TapeOptions {
  /** Where recording forwards to (default: `$REEL_LLM_UPSTREAM`, else the providers' APIs, by request path). */
  upstream?: string;
  /** Extra flags for `reel llm` (e.g. `["--ignore", "/system"]`). */
  args?: string[];
  /** How long reel may take to listen, in ms (default 10000). */
  startTimeoutMs?: number;
}

export interface ReelLlm {
  /** `http://127.0.0.1:PORT`: the SDK's `baseURL` (OpenAI's SDK: append `/v1`). */
  baseURL: string;
  mode: "replay" | "record";
  tape: string;
  dir: string;
  /** Everything reel llm printed on stderr so far. */
  readonly stderr: string;
  /**
   * Sends SIGTERM and waits for reel to exit; throws a {@link ReelReplayError} with its
   * stderr (the misses) when it exited 3, or any other failure. After a recording, the new
   * run replaces the tape's older runs.
   */
  stop(): Promise<{ exit: 0; stderr: string }>;
}

/** `reel llm` replaying (or recording) a tape on loopback; resolves once it listens. */
export function reelLlm(options: ReelLlmOptions): Promise<ReelLlm>;

/** A replay that was not clean, or reel that did not finish; `report` is what reel said. */
export class ReelReplayError extends Error {
  name: "ReelReplayError";
  report: PlayReport | { exit: number | null; stderr: string } | undefined;
}

/** A setup mistake: no reel, an unknown mode, no tape in mode "none", a bad option. */
export class ReelSetupError extends Error {
  name: "ReelSetupError";
}

/**
 * The `reel` binary a test would run: the option, else `$REEL_BIN`, else the one the
 * `reel-cli` package installed, else PATH. Throws {@link ReelSetupError} when there is none.
 */
export function findReel(option?: string): string;

/** The record mode in effect: the option, else `$REEL_RECORD_MODE`, else `"once"`. */
export function recordMode(option?: RecordMode): RecordMode;
