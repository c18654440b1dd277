/**
 * Stack config and `.env` validation (infra/config.ts), and the shipped `.env.example`.
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { describe, expect, it } from "vitest";
import { operatorEnvSchema, PLACEHOLDER, PlatformConfigError, parseConfig } from "../../infra/config.js";
import { REPO_ROOT } from "../../infra/files.js";
import { SECRET_SPECS } from "../../infra/secrets.js";

const example = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));

describe("parseConfig", () => {
  it("defaults to the local stack on loopback with the organisation defaults of .env.example", () => {
    const config = parseConfig({}, {});
    expect(config.stack).toMatchObject({
      target: "local",
      bindAddress: "127.0.0.1",
      platforms: {},
      sshOpts: [],
    });
    expect(config.env).toMatchObject({
      DEFAULT_USER_BUDGET: 10,
      DEFAULT_BUDGET_DURATION: "30d",
      DEFAULT_TPM_LIMIT: 10000,
      DEFAULT_RPM_LIMIT: 60,
      ADMIN_SESSION_IDLE_TIMEOUT_MS: 1_800_000,
      CONSOLE_TAG: "main",
      DASHBOARD_ADMIN_USER: "admin",
    });
    expect(config.cookieDomain).toBe("localhost");
  });

  it("treats replace-me and empty values as unset", () => {
    const config = parseConfig(
      {},
      { GATEWAY_MASTER_KEY: PLACEHOLDER, JWT_REFRESH_SECRET: "  ", CONSOLE_TAG: "" },
    );
    expect(config.env.GATEWAY_MASTER_KEY).toBeUndefined();
    expect(config.env.JWT_REFRESH_SECRET).toBeUndefined();
    expect(config.env.CONSOLE_TAG).toBe("main");
  });

  it("refuses a vm stack without an ssh host or a domain", () => {
    expect(() => parseConfig({ target: "vm", domain: "example.com" }, {})).toThrow(
      /dockerHost: the vm stack needs ssh/,
    );
    expect(() => parseConfig({ target: "vm", dockerHost: "tcp://h:2375", domain: "x.org" }, {})).toThrow(
      PlatformConfigError,
    );
    expect(() => parseConfig({ target: "vm", dockerHost: "ssh://u@h" }, {})).toThrow(/domain/);
  });

  it("refuses bad operator values, naming each", () => {
    const bad = () =>
      parseConfig(
        {},
        { GATEWAY_MASTER_KEY: "nope", COOKIE_SAMESITE: "strict", CREDS_IV: "xyz", DEFAULT_RPM_LIMIT: "-1" },
      );
    expect(bad).toThrow(/GATEWAY_MASTER_KEY: must start with sk-/);
    expect(bad).toThrow(/COOKIE_SAMESITE: must be lax/);
    expect(bad).toThrow(/CREDS_IV: must be 32 hexadecimal/);
    expect(bad).toThrow(/DEFAULT_RPM_LIMIT/);
  });

  it("reads gatewayWorkers as a positive integer, default 1", () => {
    expect(parseConfig({}, {}).stack.gatewayWorkers).toBe(1);
    expect(parseConfig({ gatewayWorkers: 2 }, {}).stack.gatewayWorkers).toBe(2);
    expect(() => parseConfig({ gatewayWorkers: 0 }, {})).toThrow(/stack config gatewayWorkers/);
    expect(() => parseConfig({ gatewayWorkers: 1.5 }, {})).toThrow(/gatewayWorkers/);
  });

  it("refuses a vm cookie domain that does not cover the domain", () => {
    const vm = { target: "vm", dockerHost: "ssh://u@h", domain: "ai.example.com" };
    expect(parseConfig(vm, { COOKIE_DOMAIN: ".example.com" }).cookieDomain).toBe(".example.com");
    expect(() => parseConfig(vm, { COOKIE_DOMAIN: ".other.org" })).toThrow(/leading-dot parent/);
  });

  it("replaces an image reference from the stack config and validates platform names", () => {
    const config = parseConfig({ images: { minio: "cgr.dev/chainguard/minio@sha256:abc" } }, {});
    expect(config.images.minio).toBe("cgr.dev/chainguard/minio@sha256:abc");
    expect(config.images.postgres).toBe("pgvector/pgvector:pg17");
    expect(() => parseConfig({ platforms: { chat: "amd64" } }, {})).toThrow(/platforms\.chat/);
    expect(() => parseConfig({ platforms: { nosuch: "linux/amd64" } }, {})).toThrow(PlatformConfigError);
  });
});

describe(".env.example", () => {
  it("lists every operator variable", () => {
    const spec = [
      "GATEWAY_MASTER_KEY",
      "TRACE_INIT_USER_PASSWORD",
      "DASHBOARD_ADMIN_USER",
      "DASHBOARD_ADMIN_PASSWORD",
      "COOKIE_DOMAIN",
      "COOKIE_SAMESITE",
      "JWT_REFRESH_SECRET",
      "SHARED_NETWORK",
      "ADMIN_SESSION_IDLE_TIMEOUT_MS",
      "TRACE_HOST",
      "TRACE_PUBLIC_KEY",
      "TRACE_SECRET_KEY",
      "GUARD_SCANNER_API_BASE",
      "OPENAI_API_KEY",
      "AGENTS_URL",
      "CONSOLE_TAG",
      "DEFAULT_USER_BUDGET",
      "DEFAULT_BUDGET_DURATION",
      "DEFAULT_TPM_LIMIT",
      "DEFAULT_RPM_LIMIT",
      "DEFAULT_TEAM_ID",
      "BUDGET_WEBHOOK_URL",
    ];
    for (const name of spec) expect(Object.keys(example), name).toContain(name);
    expect(example.COOKIE_SAMESITE).toBe("lax");
    expect(example.CONSOLE_TAG).toBe("main");
  });

  it("has every secret of the stack as the placeholder, and the schema knows every listed variable", () => {
    for (const spec of Object.values(SECRET_SPECS)) expect(example[spec.env], spec.env).toBe(PLACEHOLDER);
    const known = new Set(Object.keys(operatorEnvSchema.shape));
    for (const name of Object.keys(example))
      if (!name.endsWith("_API_KEY")) expect(known, name).toContain(name);
    expect(() => parseConfig({}, example)).not.toThrow();
  });
});
