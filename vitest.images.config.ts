import { defineConfig } from "vitest/config";

/**
 * The image suite (`npm run test:images`): builds and starts every image with a private Docker engine.
 * Slow (minutes) and needs root, so the default `npm test` config leaves test/images out.
 */
export default defineConfig({
  test: {
    include: ["test/images/**/*.test.ts"],
    // A cold run makes a Debian rootfs and runs `npm ci` inside each build.
    testTimeout: 30 * 60_000,
    hookTimeout: 30 * 60_000,
    pool: "forks",
    fileParallelism: false,
    // .ci/run adds this report to the default suite's for its closing "N passed, N failed, N skipped" line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest-images.json" }]],
  },
});
