import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { databasePerTest } from "../../../helpers/postgres.js";
import { openStore, spendRow } from "./harness.js";

const { cleanups, database, proxyTo } = databasePerTest();

describe("createStore", () => {
  it("reports readiness from the database and names it without credentials when it is gone", async () => {
    const db = await database();
    const proxy = await proxyTo(db);
    const { store } = await openStore(db.urlVia(proxy.port).replace("postgres@", "postgres:pw-never-shown@"));
    cleanups.push(() => store.close(100));
    expect(await store.readiness()).toEqual({ status: "connected" });
    proxy.cut();
    const down = await store.readiness();
    expect(down.status).toBe("disconnected");
    expect(down.detail).toContain(`127.0.0.1:${proxy.port}/${db.name}`);
    expect(down.detail).not.toContain("pw-never-shown");
    proxy.restore();
    expect(await store.readiness()).toEqual({ status: "connected" });
  });

  it("exposes the spend buffer and flush failure metrics on the given registry", async () => {
    const db = await database();
    const registry = new Registry();
    const { store } = await openStore(db.url, { registry, flushIntervalMs: 60_000 });
    cleanups.push(() => store.close());
    store.spend.record(spendRow());
    store.spend.record(spendRow());
    const text = await registry.metrics();
    expect(text).toContain("litellm_spend_buffer_rows 2");
    expect(text).toContain("litellm_spend_flush_failures_total 0");
    expect(text).toContain("litellm_spend_rows_dropped_total 0");
    await store.spend.flush();
    expect(await registry.metrics()).toContain("litellm_spend_buffer_rows 0");
  });

  it("close() is safe to call twice", async () => {
    const db = await database();
    const { store } = await openStore(db.url);
    await store.close();
    await expect(store.close()).resolves.toMatchObject({ pending: 0 });
  });
});
