// Finding reel: the `reel` option, else REEL_BIN, else the reel-cli package's binary
// (its platform package's `bin/reel`, else its launcher), else PATH, else an error that
// says how to get one. The package layouts are built in a temporary directory, as npm
// lays them out, so the suite does not depend on which reel-cli is installed here.

import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { expect, test } from "vitest";

import { findReel } from "../src/index.js";
import { installedReel } from "../src/reel.js";
import { reel, tapes } from "./support.js";

const src = join(dirname(fileURLToPath(import.meta.url)), "../src");

/**
 * A project whose node_modules holds reel-test (a copy of src/) and, when `platforms`
 * is given, reel-cli with those platform packages (`{ name, os, cpu, binary }`).
 * Returns the file reel-test's lookups start from.
 */
function project(platforms) {
  const root = tapes();
  const modules = join(root, "node_modules");
  cpSync(src, join(modules, "reel-test/src"), { recursive: true });
  writeFileSync(join(modules, "reel-test/package.json"), JSON.stringify({ name: "reel-test", type: "module" }));
  if (platforms !== undefined) {
    const cli = join(modules, "reel-cli");
    mkdirSync(join(cli, "bin"), { recursive: true });
    writeFileSync(
      join(cli, "package.json"),
      JSON.stringify({
        name: "reel-cli",
        version: "0.1.0",
        bin: { reel: "bin/reel.js" },
        optionalDependencies: Object.fromEntries(platforms.map((p) => [p.name, "0.1.0"])),
      }),
    );
    writeFileSync(join(cli, "bin/reel.js"), "#!/usr/bin/env node\n");
    chmodSync(join(cli, "bin/reel.js"), 0o755);
    for (const p of platforms) {
      const dir = join(modules, p.name);
      mkdirSync(join(dir, "bin"), { recursive: true });
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: p.name, version: "0.1.0", os: p.os, cpu: p.cpu }));
      if (p.binary) symlinkSync(reel, join(dir, "bin/reel"));
    }
  }
  return join(modules, "reel-test/src/reel.js");
}

const here = { os: [process.platform], cpu: [process.arch] };

test("the reel-cli package's binary is the one for this platform, else its launcher", () => {
  const from = project([
    { name: "reel-cli-elsewhere", os: ["aix"], cpu: ["ppc64"], binary: true },
    { name: "reel-cli-here", ...here, binary: true },
  ]);
  expect(installedReel(from)).toBe(join(dirname(from), "../../reel-cli-here/bin/reel"));

  // Only another platform's binary is installed (or none): reel-cli's own `bin`.
  const launcher = project([{ name: "reel-cli-elsewhere", os: ["!" + process.platform], cpu: here.cpu, binary: true }]);
  expect(installedReel(launcher)).toBe(join(dirname(launcher), "../../reel-cli/bin/reel.js"));

  expect(installedReel(project(undefined))).toBeUndefined();
});

test("REEL_BIN wins over the reel-cli package", () => {
  const saved = process.env.REEL_BIN;
  try {
    process.env.REEL_BIN = reel;
    expect(findReel(undefined)).toBe(reel);
  } finally {
    if (saved === undefined) delete process.env.REEL_BIN;
    else process.env.REEL_BIN = saved;
  }
});

/** What `findReel()` of reel-test at `from` returns or throws, with REEL_BIN unset and no reel on PATH. */
function findFrom(from) {
  const env = { ...process.env, PATH: "/nonexistent" };
  delete env.REEL_BIN;
  const script = `import("${join(dirname(from), "index.js")}").then((m) => {
    try { console.log("found " + m.findReel(undefined)); } catch (e) { console.log(e.name + ": " + e.message); }
  });`;
  const out = spawnSync(process.execPath, ["-e", script], { env, encoding: "utf8" });
  return out.stdout.trim() || out.stderr;
}

test("without REEL_BIN the reel-cli package's reel runs, not one on PATH", () => {
  const from = project([{ name: "reel-cli-here", ...here, binary: true }]);
  expect(findFrom(from)).toBe(`found ${join(dirname(from), "../../reel-cli-here/bin/reel")}`);
});

test("no reel anywhere says how to install one", () => {
  expect(findFrom(project(undefined))).toBe(
    "ReelSetupError: reel not found: the reel-cli package, which installs it, is not installed " +
      "where reel-test resolves its dependencies, and there is no reel on PATH; install it " +
      "(npm i -D reel-cli), or name a reel binary with REEL_BIN=/path/to/reel or { reel: '/path/to/reel' }",
  );
});
