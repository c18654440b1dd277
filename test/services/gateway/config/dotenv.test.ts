/**
 * The operator's .env as a gateway run from source reads it: the file fills what the environment lacks, and
 * the stack's trace keys in it turn tracing on only together with a trace host.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadOperatorEnv, operatorEnvFile } from "../../../../services/gateway/src/config/dotenv.js";
import { readEnv } from "../../../../services/gateway/src/config/env.js";
import { TraceSettingsError } from "../../../../services/gateway/src/config/trace-settings.js";

function envFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "gw-dotenv-")), ".env");
  writeFileSync(path, text);
  return path;
}

const stackKeys =
  "TRACE_HOST=\nTRACE_PUBLIC_KEY=pk-lf-1234\nTRACE_SECRET_KEY=sk-lf-5678\nGATEWAY_MASTER_KEY=sk-master-0123456789\n";

describe("loadOperatorEnv", () => {
  it("starts with tracing off when .env has the stack's trace keys and no TRACE_HOST, and says why", () => {
    const env: NodeJS.ProcessEnv = {};
    const notes = loadOperatorEnv(envFile(stackKeys), env);
    expect(readEnv(env).trace).toBeUndefined();
    expect(env.GATEWAY_MASTER_KEY).toBe("sk-master-0123456789");
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("tracing off");
    expect(notes[0]).toContain("TRACE_HOST");
    expect(notes[0]).not.toContain("sk-lf-5678");
  });

  it("traces with the file's keys once a trace host is set, from the environment or the file", () => {
    const fromShell: NodeJS.ProcessEnv = { TRACE_HOST: "http://localhost:3000" };
    expect(loadOperatorEnv(envFile(stackKeys), fromShell)).toEqual([]);
    expect(readEnv(fromShell).trace?.publicKey).toBe("pk-lf-1234");
    const fromFile: NodeJS.ProcessEnv = {};
    loadOperatorEnv(envFile(stackKeys.replace("TRACE_HOST=", "TRACE_HOST=http://localhost:3000")), fromFile);
    expect(readEnv(fromFile).trace?.secretKey).toBe("sk-lf-5678");
  });

  it("still refuses trace keys set in the environment itself without a host (as the stack's containers get them)", () => {
    const env: NodeJS.ProcessEnv = { TRACE_PUBLIC_KEY: "pk-lf-1", TRACE_SECRET_KEY: "sk-lf-2" };
    loadOperatorEnv(envFile("GATEWAY_MASTER_KEY=sk-master-0123456789\n"), env);
    expect(() => readEnv(env)).toThrow(TraceSettingsError);
    expect(() => readEnv(env)).toThrow(/TRACE_HOST not set/);
  });

  it("keeps what the environment already has and leaves a missing file alone", () => {
    const env: NodeJS.ProcessEnv = { GATEWAY_MASTER_KEY: "sk-from-shell-000000000" };
    loadOperatorEnv(envFile(stackKeys), env);
    expect(env.GATEWAY_MASTER_KEY).toBe("sk-from-shell-000000000");
    const untouched: NodeJS.ProcessEnv = {};
    expect(loadOperatorEnv("/nonexistent/.env", untouched)).toEqual([]);
    expect(untouched).toEqual({});
  });

  it("reads <repo>/.env by default, the file GATEWAY_ENV_FILE names, or none when it is empty", () => {
    expect(operatorEnvFile("/repo/", {})).toBe("/repo/.env");
    expect(operatorEnvFile("/repo/", { GATEWAY_ENV_FILE: "/etc/gateway.env" })).toBe("/etc/gateway.env");
    expect(operatorEnvFile("/repo/", { GATEWAY_ENV_FILE: "" })).toBeUndefined();
  });
});
