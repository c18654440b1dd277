import { defineConfig } from "vitest/config";

/**
 * The stack rehearsal (`npm run test:stack`): creates every container the program declares for the `local`
 * stack on a private Docker engine and checks it. Slow (minutes; a cold run builds every image) and needs root,
 * so the default `npm test` config leaves test/stack/stack.test.ts out.
 */
export default defineConfig({
  test: {
    include: ["test/stack/stack.test.ts"],
    testTimeout: 30 * 60_000,
    hookTimeout: 60 * 60_000,
    pool: "forks",
    fileParallelism: false,
    reporters: ["default", ["json", { outputFile: "test-results/vitest-stack.json" }]],
  },
});
