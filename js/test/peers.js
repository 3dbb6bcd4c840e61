// Where the suite's peers live and how test files reach them. The package itself depends
// on nothing; the suite drives real peers installed by `cargo xtask peers`: the MCP
// TypeScript SDK, server-everything, the Anthropic SDK and the aimock model server in
// `<peers>/node_modules`, vitest in `<peers>/vitest-4.1.12`. The peers directory is
// `$REEL_PEERS`, else the workspace's `.peers/`.

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The peers directory. */
export const peers = resolve(process.env.REEL_PEERS || join(here, "../../.peers"));

/** The vitest install the suite runs under. */
export const vitestPrefix = join(peers, "vitest-4.1.12");

/** Bare imports resolved from the peers, and the directory each is installed under. */
const FROM = [
  ["vitest", vitestPrefix],
  ["@modelcontextprotocol/sdk", peers],
  ["@modelcontextprotocol/server-everything", peers],
  ["@anthropic-ai/sdk", peers],
  ["@copilotkit/aimock", peers],
];

/**
 * A vite plugin resolving those imports as if a file in the peers' directory had made
 * them, so the packages' own `exports` maps apply.
 */
export function peersPlugin() {
  return {
    name: "reel-test-peers",
    enforce: "pre",
    async resolveId(source, _importer, options) {
      const hit = FROM.find(([pkg]) => source === pkg || source.startsWith(`${pkg}/`));
      if (!hit) return null;
      const [pkg, prefix] = hit;
      if (!existsSync(join(prefix, "node_modules", pkg))) {
        throw new Error(`peer ${pkg} is missing under ${prefix}: run \`cargo xtask peers\` (or set REEL_PEERS)`);
      }
      return this.resolve(source, join(prefix, "package.json"), { ...options, skipSelf: true });
    },
  };
}

/** A file of a peer package under `<peers>/node_modules`, which must exist. */
export function peerFile(rel) {
  const path = join(peers, "node_modules", rel);
  if (!existsSync(path)) {
    throw new Error(`peer file ${path} is missing: run \`cargo xtask peers\` (or set REEL_PEERS)`);
  }
  return path;
}
