// The suite that judges the package: real SDK clients against real servers, recorded and
// replayed through the `reel` the package finds (REEL_BIN, else reel-cli's, else PATH).
// `test/inner/` holds files the suite runs in a vitest of their own, to see what a
// failing replay looks like.
import { tmpdir } from "node:os";
import { join } from "node:path";

export default {
  // Vite's cache outside the checkout: the suite leaves js/ as it found it.
  cacheDir: join(tmpdir(), "reel-test-vite"),
  test: {
    include: ["test/*.test.js"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
};
