/**
 * scripts/lib/env-file.ts: .env from .env.example, values already set kept, placeholder secrets generated in
 * the shape the stack would generate them, and a second run changing nothing.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "dotenv";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../infra/files.js";
import { SECRET_SPECS } from "../../infra/secrets.js";
import { mergeEnv } from "../../scripts/lib/env-file.js";

const example = readFileSync(path.join(REPO_ROOT, ".env.example"), "utf8");

describe("mergeEnv", () => {
  it("fills every placeholder secret in the stack's shape and keeps everything else of the example", () => {
    const { text, filled, added } = mergeEnv(undefined, example);
    const env = parse(text);
    const before = parse(example);
    expect(added).toEqual([]);
    expect(filled.sort()).toEqual(
      Object.values(SECRET_SPECS)
        .map((s) => s.env)
        .sort(),
    );
    for (const spec of Object.values(SECRET_SPECS)) {
      const value = env[spec.env] ?? "";
      if (spec.kind === "hex") expect(value, spec.env).toMatch(new RegExp(`^[0-9a-f]{${spec.bytes * 2}}$`));
      else
        expect(value, spec.env).toMatch(
          new RegExp(`^${"prefix" in spec ? spec.prefix : ""}[A-Za-z0-9]{${spec.length}}$`),
        );
    }
    for (const [key, value] of Object.entries(before))
      if (!filled.includes(key)) expect(env[key], key).toBe(value);
    // Comments survive.
    expect(text.split("\n").filter((l) => l.startsWith("#"))).toEqual(
      example.split("\n").filter((l) => l.startsWith("#")),
    );
  });

  it("keeps values already set, fills emptied secrets, appends variables the example gained", () => {
    const current = [
      "# mine",
      "GATEWAY_MASTER_KEY=sk-mine",
      "DASHBOARD_ADMIN_USER=ops",
      "CACHE_PASSWORD=",
      'JWT_SECRET="quoted # value"',
      "",
    ].join("\n");
    const { text, filled, added } = mergeEnv(current, example);
    const env = parse(text);
    expect(env.GATEWAY_MASTER_KEY).toBe("sk-mine");
    expect(env.DASHBOARD_ADMIN_USER).toBe("ops");
    expect(env.JWT_SECRET).toBe("quoted # value");
    expect(env.CACHE_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(filled).toContain("CACHE_PASSWORD");
    expect(filled).not.toContain("GATEWAY_MASTER_KEY");
    expect(added).toContain("CREDS_IV");
    // An .env older than METRICS_TOKEN gets one (npm start's gateway then serves /metrics to its holder).
    expect(added).toContain("METRICS_TOKEN");
    expect(env.METRICS_TOKEN).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(added).not.toContain("GATEWAY_MASTER_KEY");
    expect(text.startsWith("# mine\nGATEWAY_MASTER_KEY=sk-mine\n")).toBe(true);
    expect(mergeEnv(text, example).text).toBe(text);
  });

  it("reads a value as dotenv (and so the stack) does: an empty value with a comment, or a quoted placeholder, is unset", () => {
    const current = ["CACHE_PASSWORD= # set me", "JWT_SECRET='replace-me' # later", ""].join("\n");
    const { text, filled } = mergeEnv(current, example);
    const env = parse(text);
    expect(filled).toContain("CACHE_PASSWORD");
    expect(filled).toContain("JWT_SECRET");
    expect(env.CACHE_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(env.JWT_SECRET).not.toBe("replace-me");
  });
});

describe("scripts/lib/env-file.ts", () => {
  it("creates .env, then reports it up to date without touching it", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "env-file-"));
    const envFile = path.join(dir, ".env");
    const run = () =>
      execFileSync("npx", ["--no-install", "tsx", "scripts/lib/env-file.ts", "--env", envFile], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
    const created = run();
    expect(created).toContain("created from .env.example; generated GATEWAY_MASTER_KEY");
    expect(created, "names variables, never prints values").not.toContain("sk-");
    const first = readFileSync(envFile, "utf8");
    expect(run()).toContain("up to date");
    expect(readFileSync(envFile, "utf8")).toBe(first);
  });
});
