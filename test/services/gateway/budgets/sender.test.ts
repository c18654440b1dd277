import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { sendDueBudgetEvents, startBudgetSender } from "../../../../services/gateway/src/budgets/sender.js";
import { createPool } from "../../../../services/gateway/src/db/pool.js";
import { writeSpendBatch } from "../../../../services/gateway/src/spend/write.js";
import { databasePerTest } from "../../../helpers/postgres.js";
import { adminApp, call, openStore, recordingLogger, spendRow } from "../store/harness.js";

const { cleanups, database } = databasePerTest();

/** A webhook receiver that answers 500 to its first `failFirst` posts, then 200; records every body. */
async function receiver(failFirst: number) {
  const bodies: Record<string, unknown>[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (chunk) => {
      data += chunk;
    });
    req.on("end", () => {
      seen += 1;
      if (seen <= failFirst) return res.writeHead(500).end();
      bodies.push(JSON.parse(data));
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    posts: () => seen,
  };
}

describe("budget webhook sender", () => {
  it("retries a failed delivery with backoff; two senders deliver each event exactly once", async () => {
    const db = await database();
    const opened = await openStore(db.url);
    const app = await adminApp(opened);
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(
      () => opened.store.close(),
      () => app.close(),
      () => pool.end(),
    );
    await call(app, "POST", "/user/new", { user_id: "bo", max_budget: null });
    const key = await call(app, "POST", "/key/generate", {
      user_id: "bo",
      key_alias: "bo-app",
      max_budget: 1,
    });
    await writeSpendBatch(
      pool,
      [spendRow({ keyHash: key.body.token, userId: "bo", spend: 0.9 })],
      opened.clock.now(),
    );

    const hook = await receiver(1);
    const log = recordingLogger();
    const options = { pool, url: hook.url, log, initialBackoffMs: 200 };
    const both = () => Promise.all([sendDueBudgetEvents(options), sendDueBudgetEvents(options)]);
    expect(await both()).toEqual([0, 0]); // first post refused, the other sender skipped the locked row
    expect(await both()).toEqual([0, 0]); // backing off
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await both()).reduce((a, b) => a + b)).toBe(1);
    expect(await both()).toEqual([0, 0]);
    expect(hook.posts()).toBe(2);
    expect(hook.bodies).toEqual([
      expect.objectContaining({
        event: "budget_threshold_reached",
        threshold: 0.8,
        key_alias: "bo-app",
        user: "bo",
        budget: "1",
        spend: "0.9",
        text: "Key bo-app: 80% of budget reached — spent $0.9 of $1",
      }),
    ]);
    expect(log.lines.join("\n")).not.toContain(hook.url);
  });

  it("startBudgetSender delivers recorded events on its own timer and stops cleanly", async () => {
    const db = await database();
    const opened = await openStore(db.url);
    const app = await adminApp(opened);
    const pool = createPool(db.url, recordingLogger());
    cleanups.push(
      () => opened.store.close(),
      () => app.close(),
      () => pool.end(),
    );
    await call(app, "POST", "/user/new", { user_id: "cy", max_budget: null });
    const key = await call(app, "POST", "/key/generate", { user_id: "cy", max_budget: 2 });
    await writeSpendBatch(
      pool,
      [spendRow({ keyHash: key.body.token, userId: "cy", spend: 1.7 })],
      opened.clock.now(),
    );
    const hook = await receiver(0);
    const stop = startBudgetSender({ pool, url: hook.url, log: recordingLogger(), intervalMs: 50 });
    for (let i = 0; i < 100 && hook.bodies.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    await stop();
    expect(hook.bodies).toEqual([expect.objectContaining({ threshold: 0.8, spend: "1.7", key_alias: null })]);
  });
});
