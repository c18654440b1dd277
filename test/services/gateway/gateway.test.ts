/**
 * Honest configuration of the assembled gateway: the admin API without DATABASE_URL says what it needs, and a
 * DATABASE_URL that waiting cannot fix fails start-up at once with a message naming the problem.
 */
import { describe, expect, it } from "vitest";
import { readEnv } from "../../../services/gateway/src/config/env.js";
import { createGateway } from "../../../services/gateway/src/gateway.js";
import { MASTER_KEY, startTestGateway, writeConfig } from "../../helpers/gateway.js";
import { adminUrl } from "../../helpers/postgres.js";
import { inspector, REDIS_URL, uniquePrefix, waitFor } from "../../helpers/redis.js";

describe("admin API without DATABASE_URL", () => {
  it("answers 501 'needs DATABASE_URL' on every admin route for the master key, 401 without a key", async () => {
    const gw = await startTestGateway("model_list: []\n");
    try {
      for (const [method, path] of [
        ["POST", "/key/generate"],
        ["GET", "/key/list"],
        ["POST", "/user/new"],
        ["GET", "/spend/logs"],
      ]) {
        const res = await fetch(`${gw.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": "application/json" },
          ...(method === "POST" ? { body: "{}" } : {}),
        });
        const body = (await res.json()) as { error: { message: string; code: string } };
        expect({ path, status: res.status }).toEqual({ path, status: 501 });
        expect(body.error.message).toContain("needs DATABASE_URL");
        expect(body.error.code).toBe("database_not_configured");
      }
      expect((await fetch(`${gw.url}/key/list`)).status).toBe(401);
    } finally {
      await gw.close();
    }
  });
});

describe("a DATABASE_URL waiting cannot fix", () => {
  const env = (databaseUrl: string) =>
    readEnv({
      GATEWAY_CONFIG: writeConfig("model_list: []\n"),
      LOG_LEVEL: "silent",
      DATABASE_URL: databaseUrl,
    });

  it("fails at once for a database that does not exist, naming it", async () => {
    const url = new URL(adminUrl);
    url.pathname = "/gw_no_such_database";
    const started = createGateway(env(url.toString()));
    await expect(started).rejects.toThrow(/gw_no_such_database: the database does not exist/);
  }, 10_000);

  it("refuses an unparseable or non-Postgres URL in the environment, without repeating it", () => {
    for (const bad of ["not a url with s3cret", "mysql://root:s3cret@db:3306/app"]) {
      let message = "";
      try {
        env(bad);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain("DATABASE_URL");
      expect(message).not.toContain("s3cret");
    }
  });
});

describe("GATEWAY_REDIS_KEY_PREFIX", () => {
  it("puts the gateway's Redis channel (and keys) under the prefix, and refuses a prefix with other characters", async () => {
    const prefix = `${uniquePrefix("prefix-env")}x:`;
    const gw = await startTestGateway("model_list: []\n", { REDIS_URL, GATEWAY_REDIS_KEY_PREFIX: prefix });
    const redis = inspector();
    try {
      await waitFor("subscribed under the prefix", async () => {
        const channels = (await redis.pubsub("CHANNELS", `${prefix}*`)) as string[];
        return channels.length > 0;
      });
    } finally {
      redis.disconnect();
      await gw.close();
    }
    expect(() => readEnv({ GATEWAY_REDIS_KEY_PREFIX: "bad prefix!" })).toThrow(/GATEWAY_REDIS_KEY_PREFIX/);
    expect(readEnv({}).redisKeyPrefix).toBe("gw:");
  });
});
