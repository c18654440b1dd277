/**
 * Sign-ins to the console in the gateway's audit log (issue 34, defect 5): a chat user's sign-in and sign-out,
 * an operator's, refused ones with their reason, each from the browser's address (x-forwarded-for, which the
 * console trusts from its proxy), read back through the gateway's /audit/logs.
 */
import type { AuditLogEntry } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleStack, chatVisitor, startConsoleStack, Visitor } from "../../helpers/console.js";
import { MASTER_KEY } from "../../helpers/gateway.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;

beforeAll(async () => {
  stack = await startConsoleStack();
});
afterAll(async () => {
  await stack?.close();
});

/** The console's sign-in rows, once `count` of them are there (the writes are not awaited). */
async function signInRows(count: number): Promise<AuditLogEntry[]> {
  let rows: AuditLogEntry[] = [];
  await waitFor(`${count} sign-in events`, async () => {
    const { logs } = await stack.admin.auditLogs({ page_size: 200 });
    rows = logs.filter((r) => r.action.startsWith("console.")).reverse();
    return rows.length >= count;
  });
  return rows;
}

const view = (r: AuditLogEntry) => [r.actor, r.action, r.user_id, r.source_ip, r.after];

describe("sign-in events", () => {
  it("records a chat user's sign-in and sign-out, an operator's, and refused ones, from the browser's address", async () => {
    const { visitor, userId } = await chatVisitor(stack, "ada@example.com");
    await expect(
      visitor.request("POST", "/api/logout", { headers: { "x-forwarded-for": "198.51.100.9" } }),
    ).resolves.toMatchObject({ status: 200 });
    const operator = new Visitor(stack.url);
    const wrong = await operator.request("POST", "/api/admin/login", {
      body: { master_key: "sk-not-it" },
      headers: { "x-forwarded-for": "203.0.113.5" },
    });
    expect(wrong.status).toBe(401);
    const right = await operator.request("POST", "/api/admin/login", {
      body: { master_key: MASTER_KEY },
      headers: { "x-forwarded-for": "203.0.113.5" },
    });
    expect(right.status).toBe(200);
    const forged = new Visitor(stack.url).withChatCookie("not-a-token");
    expect((await forged.me()).status).toBe(401);

    // The writes are not awaited by the sign-in: compared as a set.
    const rows = await signInRows(5);
    expect(rows).toHaveLength(5);
    expect(rows.map(view)).toEqual(
      expect.arrayContaining([
        [`console:user:${userId}`, "console.sign_in", userId, expect.stringMatching(/127\.0\.0\.1$/), null],
        [`console:user:${userId}`, "console.sign_out", userId, "198.51.100.9", null],
        [
          "console:operator:unknown",
          "console.sign_in_failed",
          null,
          "203.0.113.5",
          { reason: "bad_master_key" },
        ],
        ["console:operator:master-key", "console.sign_in", null, "203.0.113.5", null],
        [
          "console:user:unknown",
          "console.sign_in_failed",
          null,
          expect.stringMatching(/127\.0\.0\.1$/),
          { reason: "bad_token" },
        ],
      ]),
    );
    // Nothing secret in them: not the master key, not the presented one.
    expect(JSON.stringify(rows)).not.toContain(MASTER_KEY);
    expect(JSON.stringify(rows)).not.toContain("sk-not-it");
  });
});
