// The inner suite: files the outer suite runs as a user's test run, expecting failures.
import { tmpdir } from "node:os";
import { join } from "node:path";

export default {
  // Vite's cache outside the checkout: the suite leaves js/ as it found it.
  cacheDir: join(tmpdir(), "reel-test-vite"),
  test: {
    include: ["*.inner.js"],
    testTimeout: 30_000,
  },
};
