/** GATEWAY_RUN_MIGRATIONS as read from the environment: on by default (and when empty), off only by `false`, anything else refused. */
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
