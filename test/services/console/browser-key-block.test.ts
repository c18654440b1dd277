/**
 * The console administrator's All keys view in Chromium against a real gateway: a team key names its team as
 * owner (and is found by the team's name); Block asks first (Cancel returns the focus to the button), then the
 * key shows "Blocked", the notice takes the focus and the gateway refuses the key (401); Unblock re-admits it.
 * Screenshots and axe-core at 1440×900 and 390×844.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  type BrowserConsole,
  shootBoth,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let page: Page;

const focused = () =>
  page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null");
const focusedRole = () =>
  page.evaluate<string | null>("document.activeElement?.getAttribute('role') ?? null");

describe.skipIf(skipReason !== undefined)(`blocking keys in All keys in Chromium ${skipReason ?? ""}`, () => {
  // The first chat account (ada) is the console's administrator: it has All keys.
  ctx = useBrowserConsole(undefined, {}, async () => {
    page = ctx.page;
  });

  it("names a team key's team as owner and finds it by the team's name", async () => {
    const team = await ctx.stack.admin.newTeam({ team_alias: "Search" });
    await ctx.stack.admin.generateKey({ team_id: team.team_id, key_alias: "indexer" });
    await page.goto(`${ctx.stack.url}/all-keys`);
    const row = page.getByTestId("key-row").filter({ hasText: "indexer" });
    await expect(row.getByTestId("key-owner").textContent()).resolves.toBe("team Search");
    await expect(row.getByText("limits of team Search").count()).resolves.toBe(1);
    await page.getByLabel("Find a key").fill("search");
    await expect(page.getByTestId("key-row").count()).resolves.toBe(1);
    await page.getByLabel("Find a key").fill("");
  }, 60_000);

  it("blocks a key after asking (the gateway refuses it), shows it Blocked, and unblocks it", async () => {
    await page.goto(`${ctx.stack.url}/keys`); // the first visit provisions ada's gateway user
    await page.getByRole("button", { name: "Generate key" }).waitFor();
    const made = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "blockme" });
    const client = ctx.stack.gateway.clientWith(made.key);
    const call = () =>
      client.chat.completions.create({ model: "general", messages: [{ role: "user", content: "hi" }] }).then(
        () => 200,
        (error: { status?: number }) => error.status ?? 0,
      );
    expect(await call()).toBe(200);

    await page.goto(`${ctx.stack.url}/all-keys`);
    const row = page.getByTestId("key-row").filter({ hasText: "blockme" });
    const label = `blockme (${made.key_name})`;
    const block = row.getByRole("button", { name: `Block ${label}` });
    await block.click();
    const dialog = page.getByRole("dialog", { name: "Block this key?" });
    await dialog.getByText("is refused within seconds").waitFor();
    const violations = await shootBoth(page, "all-keys-block-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    await waitFor("the focus back on Block", async () => (await focused()) === `Block ${label}`);
    expect((await ctx.stack.admin.keyInfo(made.token)).info.blocked).toBe(false);

    await block.click();
    await dialog.getByRole("button", { name: "Block", exact: true }).click();
    await page.getByText(`Key ${label} blocked`).waitFor();
    await row.getByTestId("key-blocked").waitFor();
    await waitFor("the notice focused", async () => (await focusedRole()) === "status");
    await waitFor("the blocked key refused", async () => (await call()) === 401);
    violations.push(...(await shootBoth(page, "all-keys-blocked")));
    const audit = (await ctx.stack.admin.auditLogs({ key_hash: made.token })).logs;
    expect(audit.filter((r) => r.action === "key.block").map((r) => r.actor)).toEqual([
      `console:user:${ctx.userId}`,
    ]);

    await page.getByRole("combobox", { name: "Status" }).click();
    await page.getByRole("option", { name: "Blocked", exact: true }).click();
    await expect(page.getByTestId("key-row").count()).resolves.toBe(1);

    await row.getByRole("button", { name: `Unblock ${label}` }).click();
    const unblock = page.getByRole("dialog", { name: "Unblock this key?" });
    await unblock.getByRole("button", { name: "Unblock", exact: true }).click();
    await page.getByText(`Key ${label} unblocked.`).waitFor();
    await waitFor("the unblocked key accepted", async () => (await call()) === 200);
    expect(violations).toEqual([]);
  }, 90_000);
});
