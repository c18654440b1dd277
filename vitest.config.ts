import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The image suite builds real images (minutes, root): `npm run test:images`, vitest.images.config.ts.
    exclude: [...configDefaults.exclude, "test/images/**", "test/stack/stack.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Suites share one Postgres and one Redis; each suite isolates itself (own database, own key prefix).
    pool: "forks",
    // The JSON report lets .ci/run print a plain "N passed, N failed, N skipped" closing line.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
