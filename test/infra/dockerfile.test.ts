/**
 * services/gateway/Dockerfile and .dockerignore, read as text (no Docker engine here): pinned Node LTS on every
 * stage, multi-stage with production-only dependencies, non-root runtime, the right entry point, baked config,
 * and a build context that still holds everything the Dockerfile copies.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { dockerignorePatterns, readDockerfile } from "../helpers/dockerfile.js";

const { instructions, stages, finalStage } = readDockerfile("services/gateway/Dockerfile");
const ignore = dockerignorePatterns();

/** Whether `.dockerignore` excludes `file` (its patterns: plain paths, `dir/*`, `**` prefixes, `!` re-includes). */
function ignored(file: string): boolean {
  let out = false;
  for (const raw of ignore) {
    const negate = raw.startsWith("!");
    const pattern = negate ? raw.slice(1) : raw;
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]]/g, "\\$&")
        .replace(/\*\*\//g, "\0")
        .replace(/\*/g, "[^/]*")
        .replace(/\0/g, "(.*/)?")}(/.*)?$`,
    );
    if (re.test(file)) out = !negate;
  }
  return out;
}

describe("gateway Dockerfile", () => {
  it("builds every stage from one pinned Node LTS image (22 or 24, exact version, slim or alpine)", () => {
    const arg = instructions.find((l) => l.startsWith("ARG NODE_IMAGE="));
    expect(arg).toMatch(/^ARG NODE_IMAGE=node:(22|24)\.\d+\.\d+-(alpine|slim|bookworm-slim)$/);
    expect(stages.length).toBeGreaterThanOrEqual(3);
    for (const stage of stages) expect(stage).toMatch(/^FROM \$\{NODE_IMAGE\} AS [a-z]+$/);
  });

  it("installs with npm ci, builds the gateway workspace and the admin-api package it imports, and ships production dependencies only", () => {
    expect(instructions).toContainEqual(expect.stringMatching(/^RUN npm ci --workspace services\/gateway /));
    expect(instructions).toContain("RUN npm run build --workspace services/gateway");
    expect(instructions).toContainEqual(
      expect.stringMatching(/^RUN npm ci --omit=dev --workspace services\/gateway /),
    );
    expect(finalStage.filter((l) => l.startsWith("COPY --from=build"))).toEqual([
      "COPY --from=build /app/packages/admin-api/dist ./packages/admin-api/dist",
      "COPY --from=build /app/services/gateway/dist ./services/gateway/dist",
    ]);
  });

  it("ships every node_modules directory the pruned install makes, not only the root's", () => {
    // npm nests a workspace's dependency under <workspace>/node_modules when its version differs from the
    // root's (the gateway's dotenv 17): the runtime stage must copy those directories too.
    const lock = JSON.parse(readFileSync(`${REPO_ROOT}package-lock.json`, "utf8")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const nested = Object.entries(lock.packages)
      .filter(([path, meta]) => path.startsWith("services/gateway/node_modules/") && !meta.dev)
      .map(([path]) => path);
    expect(nested.length).toBeGreaterThan(0);
    const fromDeps = finalStage
      .filter((l) => l.startsWith("COPY --from=deps "))
      .map((l) => l.split(/\s+/)[2] ?? "");
    for (const path of [...nested, "node_modules/fastify"])
      expect(
        fromDeps.some((src) => `/app/${path}`.startsWith(src.endsWith("/") ? src : `${src}/`)),
        `${path} is copied from the deps stage`,
      ).toBe(true);
  });

  it("runs node services/gateway/dist/server.js as a non-root user with the baked config", () => {
    const user = finalStage.filter((l) => l.startsWith("USER "));
    expect(user).toEqual(["USER node"]);
    expect(finalStage.at(-1)).toBe('CMD ["node", "services/gateway/dist/server.js"]');
    expect(finalStage).toContain("COPY litellm/config.yaml ./litellm/config.yaml");
    const env = finalStage.find((l) => l.startsWith("ENV ")) ?? "";
    expect(env).toContain("GATEWAY_CONFIG=/app/litellm/config.yaml");
    expect(env).toContain("GUARDRAIL_POLICY=/app/litellm/guardrails/policy.yaml");
    expect(finalStage).toContainEqual(
      expect.stringMatching(/^HEALTHCHECK .*CMD \["node", "-e", .*\/health\/liveliness/),
    );
  });

  it("copies only what the build context keeps", () => {
    const sources = instructions
      .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
      .flatMap((l) => l.split(/\s+/).slice(1, -1))
      .filter((s) => s !== ".");
    expect(sources.length).toBeGreaterThan(3);
    for (const source of sources) expect(ignored(source.replace(/\/$/, "")), source).toBe(false);
    for (const manifest of [
      "package.json",
      "package-lock.json",
      "services/gateway/package.json",
      "infra/package.json",
    ])
      expect(ignored(manifest), manifest).toBe(false);
  });

  it("keeps secrets, dependencies, build output and VCS data out of the context", () => {
    for (const path of [
      ".env",
      ".git",
      "node_modules",
      "services/gateway/node_modules",
      "services/gateway/dist",
      "infra/index.ts",
    ])
      expect(ignored(path), path).toBe(true);
  });
});
