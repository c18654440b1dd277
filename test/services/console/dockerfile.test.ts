/**
 * services/console/Dockerfile read as text (the image is built by the stack, not here): pinned Node on every
 * stage, production dependencies with every nested node_modules, the built server and web app, non-root,
 * port 3001 and a Node-only health check on /_health, and a build context that holds what it copies.
 */
import { describe, expect, it } from "vitest";
import { dockerignorePatterns, readDockerfile } from "../../helpers/dockerfile.js";

const { instructions, stages, finalStage } = readDockerfile("services/console/Dockerfile");

describe("console Dockerfile", () => {
  it("builds every stage from one pinned Node image", () => {
    expect(instructions.find((l) => l.startsWith("ARG NODE_IMAGE="))).toMatch(
      /^ARG NODE_IMAGE=node:(22|24)\.\d+\.\d+-/,
    );
    expect(stages.length).toBeGreaterThanOrEqual(3);
    for (const stage of stages) expect(stage).toMatch(/^FROM \$\{NODE_IMAGE\} AS [a-z]+$/);
  });

  it("builds admin-api, server and web app, and ships production dependencies with nested node_modules", () => {
    expect(instructions).toContain("RUN npm run build --workspace services/console");
    expect(instructions).toContainEqual(
      expect.stringMatching(/^RUN npm ci --omit=dev --workspace services\/console /),
    );
    // The whole deps tree, so a package npm nested under services/console/node_modules is not lost.
    expect(finalStage).toContain("COPY --from=deps /app/ ./");
    expect(finalStage.filter((l) => l.startsWith("COPY --from=build"))).toEqual([
      "COPY --from=build /app/packages/admin-api/dist ./packages/admin-api/dist",
      "COPY --from=build /app/services/console/dist ./services/console/dist",
    ]);
  });

  it("runs as a non-root user on port 3001 with a Node health check of /_health", () => {
    expect(finalStage).toContain("USER node");
    expect(finalStage).toContain("EXPOSE 3001");
    const health = finalStage.find((l) => l.startsWith("HEALTHCHECK"));
    expect(health).toContain('CMD ["node", "-e"');
    expect(health).toContain("http://127.0.0.1:3001/_health");
    expect(finalStage.at(-1)).toBe('CMD ["node", "services/console/dist/server/server.js"]');
  });

  it("has a build context that keeps the console's and admin-api's sources", () => {
    const patterns = dockerignorePatterns();
    for (const kept of ["services", "services/console", "packages", "packages/admin-api"]) {
      expect(patterns).not.toContain(kept);
    }
  });
});
