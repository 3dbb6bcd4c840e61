#!/usr/bin/env node
// The `reel` command of the reel-cli npm package. The binary itself comes in a package per
// platform (reel-cli-linux-x64-gnu, reel-cli-darwin-arm64, …), an optional dependency
// that npm installs only where its `os`, `cpu` and `libc` match; nothing is downloaded at
// install time and there is no install script. This file finds that binary and runs it
// with the same arguments and standard streams, and ends as it ends: with its exit code,
// or by the signal that killed it.
//
// REEL_BIN, when set, names the binary to run instead (a build of your own, or a
// platform whose package is missing).
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const MAIN = "reel-cli";
// The platforms with a package, as `${process.platform}-${process.arch}`; on Linux the
// package name adds `-gnu` or `-musl`.
const SUPPORTED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

function version() {
  try {
    return require("../package.json").version;
  } catch {
    return "latest";
  }
}

// Linux only: "gnu" when the C library is glibc, "musl" otherwise. glibc reports its
// version in Node's diagnostic report; musl does not.
function linuxLibc() {
  try {
    if (process.report) {
      // The network part of the report needs name lookups; it is not wanted here.
      process.report.excludeNetwork = true;
      const header = process.report.getReport().header;
      return header.glibcVersionRuntime ? "gnu" : "musl";
    }
  } catch {
    // fall through to the file test
  }
  const fs = require("node:fs");
  const musl = ["/lib/ld-musl-x86_64.so.1", "/lib/ld-musl-aarch64.so.1"];
  return musl.some((p) => fs.existsSync(p)) ? "musl" : "gnu";
}

// The platform packages to look for, best first. A musl build of reel is linked
// statically and also runs on glibc, so it is the fallback there; a glibc build does not
// run on musl.
function candidates() {
  const key = `${process.platform}-${process.arch}`;
  if (!SUPPORTED.includes(key)) {
    fail(
      `reel-cli has no binary for this platform (${key}); it has ${SUPPORTED.join(", ")}.\n` +
        "Build reel from source (cargo install --path crates/reel in a checkout) and set " +
        "REEL_BIN to the binary.",
    );
  }
  if (process.platform !== "linux") {
    return [`${MAIN}-${key}`];
  }
  return linuxLibc() === "gnu"
    ? [`${MAIN}-${key}-gnu`, `${MAIN}-${key}-musl`]
    : [`${MAIN}-${key}-musl`];
}

function findBinary() {
  const fromEnv = process.env.REEL_BIN;
  if (fromEnv) {
    return fromEnv;
  }
  const names = candidates();
  for (const name of names) {
    try {
      return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "reel");
    } catch {
      // not installed; try the next
    }
  }
  const want = `${names[0]}@${version()}`;
  fail(
    `the package ${names[0]}, which holds reel's binary for this platform, is not installed.\n` +
      `npm installs it as an optional dependency of ${MAIN}; it is left out by ` +
      "--omit=optional (or --no-optional), and by a lock file written on another platform " +
      "without it.\n" +
      `Fix: npm install ${want} (or reinstall ${MAIN} with optional dependencies), or set ` +
      "REEL_BIN to a reel binary.",
  );
}

function fail(message) {
  process.stderr.write(`reel: ${message}\n`);
  process.exit(1);
}

function run() {
  const binary = findBinary();
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });

  // SIGTERM and SIGHUP are sent to this process alone (by a test runner, an MCP client,
  // a supervisor): they are passed on. SIGINT from a terminal's Ctrl-C reaches the whole
  // foreground process group, the binary included, so passing it on too would deliver
  // it twice (and reel passes each on to a server it wraps, which may take a second
  // SIGINT as "exit now"). It is passed on only when no standard stream is a terminal,
  // when it can only have come from a program that signalled this process.
  const atTerminal = [process.stdin, process.stdout, process.stderr].some((s) => s.isTTY);
  const forwarded = atTerminal ? ["SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  const handlers = new Map();
  for (const signal of forwarded) {
    const handler = () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  if (atTerminal) {
    // The binary got it from the terminal; this process waits for it to end.
    process.on("SIGINT", () => {});
  }

  child.on("error", (err) => {
    const hint =
      err.code === "ENOENT"
        ? " (no such file: reinstall reel-cli, or check REEL_BIN)"
        : err.code === "EACCES"
          ? " (not executable: reinstall reel-cli, or chmod +x it)"
          : "";
    process.stderr.write(`reel: cannot run ${binary}: ${err.message}${hint}\n`);
    process.exit(err.code === "ENOENT" ? 127 : 126);
  });

  child.on("exit", (code, signal) => {
    if (signal) {
      // End by the same signal, so a parent sees what a direct run would show.
      for (const [name, handler] of handlers) {
        process.removeListener(name, handler);
      }
      process.removeAllListeners("SIGINT");
      process.kill(process.pid, signal);
      // A signal whose default is not to end the process: end as a shell reports it.
      setTimeout(() => process.exit(128 + (require("node:os").constants.signals[signal] || 0)), 100);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

run();
