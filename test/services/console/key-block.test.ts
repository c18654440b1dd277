/**
 * Blocking a key from the console's All keys view against a real gateway: only administrators may block or
 * unblock (403 for a plain user, even on their own key, and nothing changes); a blocked key is listed as
 * blocked and refused by the gateway (401) until unblocked; both changes are audited with the console session
 * as actor. The list names a team key's team by its alias.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStack,
  chatVisitor,
  startConsoleStack,
  type Visitor,
  waitUntilKeyRefused,
} from "../../helpers/console.js";
import { waitFor } from "../../helpers/redis.js";

let stack: ConsoleStack;
let admin: Visitor; // first registered chat account: ADMIN
let adminId: string;
let alice: Visitor;

interface ListedKey {
  token: string;
  blocked: boolean;
  team_id: string | null;
  team_alias: string | null;
}

beforeAll(async () => {
  stack = await startConsoleStack();
  ({ visitor: admin, userId: adminId } = await chatVisitor(stack, "admin@example.com"));
  ({ visitor: alice } = await chatVisitor(stack, "alice@example.com"));
});
afterAll(async () => {
  await stack?.close();
});

const listed = async (token: string) =>
  (await admin.request<{ keys: ListedKey[] }>("GET", "/api/admin/keys")).body.keys.find(
    (k) => k.token === token,
  );

describe("blocking a key from the console", () => {
  it("refuses a plain user (403, even on their own key); an administrator blocks, the gateway refuses the key, unblocks, it works again", async () => {
    const created = await alice.request<{ key: string; token: string }>("POST", "/api/keys", {
      body: { name: "blockable" },
    });
    expect(created.status, created.text).toBe(201);
    const { key, token } = created.body;
    const client = stack.gateway.clientWith(key);
    const call = () =>
      client.chat.completions.create({ model: "general", messages: [{ role: "user", content: "hi" }] });
    await call();

    for (const action of ["block", "unblock"]) {
      const refused = await alice.request("POST", `/api/admin/keys/${token}/${action}`);
      expect(refused.status, action).toBe(403);
    }
    expect((await stack.admin.keyInfo(token)).info.blocked).toBe(false);
    expect((await admin.request("POST", `/api/admin/keys/${key}/block`)).status).toBe(400);
    expect((await admin.request("POST", `/api/admin/keys/${"0".repeat(64)}/block`)).status).toBe(404);

    const blocked = await admin.request<ListedKey>("POST", `/api/admin/keys/${token}/block`);
    expect(blocked.status, blocked.text).toBe(200);
    expect(blocked.body).toMatchObject({ token, blocked: true, status: "active" });
    expect(await listed(token)).toMatchObject({ blocked: true });
    await waitUntilKeyRefused(client);

    const unblocked = await admin.request<ListedKey>("POST", `/api/admin/keys/${token}/unblock`);
    expect(unblocked.status, unblocked.text).toBe(200);
    expect(unblocked.body).toMatchObject({ blocked: false });
    await waitFor("the unblocked key accepted", () =>
      call().then(
        () => true,
        () => false,
      ),
    );

    const audit = (await stack.admin.auditLogs({ key_hash: token })).logs;
    const actions = audit.filter((r) => r.action.startsWith("key.") && r.action.includes("block"));
    expect(actions.map((r) => [r.actor, r.action]).sort()).toEqual([
      [`console:user:${adminId}`, "key.block"],
      [`console:user:${adminId}`, "key.unblock"],
    ]);
  }, 60_000);
});

describe("All keys names a team key's team", () => {
  it("lists a team key with its team's alias, and null for a team without one", async () => {
    const named = await stack.admin.newTeam({ team_alias: "Search" });
    const unnamed = await stack.admin.newTeam({});
    const a = await stack.admin.generateKey({ team_id: named.team_id, key_alias: "indexer" });
    const b = await stack.admin.generateKey({ team_id: unnamed.team_id, key_alias: "crawler" });
    expect(await listed(a.token)).toMatchObject({ team_id: named.team_id, team_alias: "Search" });
    expect(await listed(b.token)).toMatchObject({ team_id: unnamed.team_id, team_alias: null });
  });
});
