/**
 * `.env` values win over generated secrets; `replace-me` and empty values generate. Built under
 * Pulumi mocks from a `.env` with a mix of pinned values and placeholders.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { container, installMocks, type MockedRun, runPlatform } from "./harness.js";

const CREDS_KEY = "ab".repeat(32);
let run: MockedRun;
let generated: string[];

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  run = await runPlatform(
    parseConfig(
      {},
      {
        GATEWAY_MASTER_KEY: "sk-operator-master",
        CHAT_SERVICE_KEY: "sk-operator-chat-service-key",
        JWT_REFRESH_SECRET: "operator-refresh",
        RELATIONAL_DB_PASSWORD: "p@ss:w/rd",
        CREDS_KEY,
        TRACE_PUBLIC_KEY: "pk-lf-operator",
        TRACE_SECRET_KEY: "replace-me",
        DASHBOARD_ADMIN_PASSWORD: "",
        DASHBOARD_ADMIN_USER: "ops",
        DEFAULT_USER_BUDGET: "25",
        DEFAULT_RPM_LIMIT: "120",
        TRACE_HOST: "https://traces.example.org",
        OPENAI_API_KEY: "sk-openai",
        ANTHROPIC_API_KEY: "replace-me",
        BUDGET_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXX",
        DEFAULT_TEAM_ID: "everyone",
      },
    ),
  );
  generated = run.registered.filter((r) => r.type.startsWith("random:")).map((r) => r.name);
});

describe(".env overrides", () => {
  it("uses pinned values on every side and creates no random resource for them", () => {
    expect(container(run, "gateway").env.GATEWAY_MASTER_KEY).toBe("sk-operator-master");
    expect(container(run, "console").env.GATEWAY_MASTER_KEY).toBe("sk-operator-master");
    expect(container(run, "chat").env.GATEWAY_API_KEY).toBe("sk-operator-chat-service-key");
    expect(container(run, "gateway").env.CHAT_SERVICE_KEY).toBe("sk-operator-chat-service-key");
    expect(container(run, "chat").env.JWT_REFRESH_SECRET).toBe("operator-refresh");
    expect(container(run, "console").env.JWT_REFRESH_SECRET).toBe("operator-refresh");
    expect(container(run, "chat").env.CREDS_KEY).toBe(CREDS_KEY);
    expect(container(run, "gateway").env.TRACE_PUBLIC_KEY).toBe("pk-lf-operator");
    expect(container(run, "trace-web").env.LANGFUSE_INIT_PROJECT_PUBLIC_KEY).toBe("pk-lf-operator");
    for (const name of [
      "gateway-master-key",
      "chat-service-key",
      "jwt-refresh-secret",
      "relational-db-password",
      "creds-key",
      "trace-public-key",
    ])
      expect(generated).not.toContain(name);
  });

  it("generates what is `replace-me` or empty", () => {
    expect(generated).toContain("trace-secret-key");
    expect(generated).toContain("dashboard-admin-password");
    expect(container(run, "gateway").env.TRACE_SECRET_KEY).toBe("sk-lf-rnd-trace-secret-key");
    expect(container(run, "dashboards").env).toMatchObject({
      GF_SECURITY_ADMIN_USER: "ops",
      GF_SECURITY_ADMIN_PASSWORD: "rnd-dashboard-admin-password",
    });
  });

  it("URL-encodes a pinned password inside connection URLs but not in the database's own setting", () => {
    expect(container(run, "relational-db").env.POSTGRES_PASSWORD).toBe("p@ss:w/rd");
    expect(container(run, "gateway").env.DATABASE_URL).toBe(
      "postgresql://platform:p%40ss%3Aw%2Frd@relational-db:5432/gateway",
    );
  });

  it("passes operator settings and provider keys with a value to the gateway", () => {
    const env = container(run, "gateway").env;
    expect(env).toMatchObject({
      DEFAULT_USER_BUDGET: "25",
      DEFAULT_RPM_LIMIT: "120",
      TRACE_HOST: "https://traces.example.org",
      OPENAI_API_KEY: "sk-openai",
      BUDGET_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/XXXX",
    });
    expect(env).not.toHaveProperty("ANTHROPIC_API_KEY");
    expect(container(run, "console").env.DEFAULT_USER_BUDGET).toBe("25");
    expect(container(run, "console").env.DEFAULT_TEAM_ID).toBe("everyone");
  });
});
