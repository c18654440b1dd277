/** Variables as read from the environment: GATEWAY_RUN_MIGRATIONS (on by default and when empty, off only by `false`, anything else refused) and AUDIT_LOG_RETENTION_DAYS. */
import { describe, expect, it } from "vitest";
import { EnvError, readEnv } from "../../../../services/gateway/src/config/env.js";

describe("GATEWAY_RUN_MIGRATIONS", () => {
  it("is on by default and turned off by false", () => {
    expect(readEnv({}).runMigrations).toBe(true);
    expect(readEnv({ GATEWAY_RUN_MIGRATIONS: "true" }).runMigrations).toBe(true);
    expect(readEnv({ GATEWAY_RUN_MIGRATIONS: "" }).runMigrations).toBe(true);
    expect(readEnv({ GATEWAY_RUN_MIGRATIONS: "false" }).runMigrations).toBe(false);
  });

  it("refuses any other value, naming the variable", () => {
    for (const value of ["no", "0", "FALSE", "off"]) {
      expect(() => readEnv({ GATEWAY_RUN_MIGRATIONS: value })).toThrow(EnvError);
      expect(() => readEnv({ GATEWAY_RUN_MIGRATIONS: value })).toThrow(
        /GATEWAY_RUN_MIGRATIONS: must be true or false/,
      );
    }
  });
});

describe("AUDIT_LOG_RETENTION_DAYS", () => {
  it("is 365 by default and refuses fewer than the 30 days the database keeps every audit row", () => {
    expect(readEnv({}).auditRetentionDays).toBe(365);
    expect(readEnv({ AUDIT_LOG_RETENTION_DAYS: "30" }).auditRetentionDays).toBe(30);
    expect(() => readEnv({ AUDIT_LOG_RETENTION_DAYS: "7" })).toThrow(
      /AUDIT_LOG_RETENTION_DAYS: must be at least 30/,
    );
  });
});
