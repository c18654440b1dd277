/**
 * The team-admin flow in Chromium against a real gateway: an administrator creates a team with a team admin in
 * the Teams tab; the team admin adds a member with a budget in the team and generates a team key (shown once,
 * focused, and accepted by the gateway); the member sees the team and their own share but not its members or
 * keys; the administrator blocks and unblocks the team. axe-core finds no violation on the Teams page of each
 * role nor in the dialogs. Screenshots of the team
 * admin's view at 1440 and 390 px go to test-results/console, or to docs/screenshots with
 * CONSOLE_SCREENSHOTS=docs (how the committed ones were made).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  a11yViolations,
  addChatCookie,
  type BrowserConsole,
  SHOTS,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { waitFor } from "../../helpers/redis.js";

let ctx: BrowserConsole;
let operator: Page;
let lead: Page;
let mate: Page;
let teamKey = "";

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const shots = SHOTS;

/** A page of a new browser context signed in as a newly registered chat user, on /teams (provisioned). */
async function signedIn(email: string): Promise<Page> {
  const context = await ctx.browser.newContext({ viewport: WIDE });
  await addChatCookie(context, ctx.stack, ctx.stack.mongo.register(email));
  const page = await context.newPage();
  await page.goto(`${ctx.stack.url}/teams`);
  await page.getByRole("tab", { name: "Teams", selected: true }).waitFor();
  return page;
}

/** axe-core's violations on `page`, one line each. */
async function violations(page: Page): Promise<string[]> {
  return (await a11yViolations(page)).map(
    (v) => `${v.id} (${v.impact}): ${v.help} — ${v.targets.join(", ")}`,
  );
}

/** The tag and text (or test id) of the focused element. */
const focused = (page: Page) =>
  page.evaluate<string>(
    `(() => { const e = document.activeElement; return e ? e.tagName + ":" + (e.getAttribute("data-testid") || e.textContent.trim().slice(0, 40)) : "none"; })()`,
  );

describe.skipIf(skipReason !== undefined)(`the Teams tab in Chromium ${skipReason ?? ""}`, () => {
  // The first account: ADMIN.
  ctx = useBrowserConsole("ops@example.com", {}, async () => {
    mkdirSync(shots, { recursive: true });
    operator = ctx.page;
    await operator.setViewportSize(WIDE);
    lead = await signedIn("lead@example.com");
    mate = await signedIn("mate@example.com");
  });

  it("an administrator creates a team with its admin; the form says what is wrong under the field", async () => {
    await operator.goto(`${ctx.stack.url}/teams`);
    await operator.getByRole("button", { name: "New team" }).click();
    const dialog = operator.getByRole("dialog", { name: "New team" });
    await expect.poll(() => focused(operator)).toMatch(/^INPUT/);
    await dialog.getByLabel("Team admin (e-mail, optional)").fill("not-an-address");
    await dialog.getByRole("button", { name: "Create team" }).click();
    await dialog.getByText("Enter a name for the team.").waitFor();
    await dialog.getByText(/Enter an e-mail address/).waitFor();
    expect(await violations(operator)).toEqual([]);
    await dialog.getByLabel("Team name", { exact: false }).fill("search");
    await dialog.getByLabel("Team admin (e-mail, optional)").fill("lead@example.com");
    await dialog.getByLabel("Team budget (USD)").fill("50");
    await dialog.getByRole("button", { name: "Create team" }).click();
    await operator.getByTestId("notice").filter({ hasText: "Team search created." }).waitFor();
    await operator.getByRole("rowheader", { name: "search" }).waitFor();
    expect(await violations(operator)).toEqual([]);
  }, 60_000);

  it("the team admin adds a member with a budget and makes a team key, shown once, that the gateway accepts", async () => {
    await lead.reload();
    const row = lead.getByRole("row").filter({ hasText: "search" });
    await expect(row.textContent()).resolves.toContain("Team admin");
    await lead.getByRole("button", { name: "Open team search" }).click();
    const heading = lead.getByRole("heading", { name: /Team search/ });
    await heading.waitFor();
    await expect.poll(() => focused(lead)).toMatch(/^H2:Team search/);

    await lead.getByRole("button", { name: "Add member" }).click();
    const add = lead.getByRole("dialog", { name: "Add a member" });
    await add.getByLabel("E-mail", { exact: false }).fill("mate@example.com");
    await add.getByLabel("Budget in the team (USD, optional)").fill("5");
    expect(await violations(lead)).toEqual([]);
    await add.getByRole("button", { name: "Add member" }).click();
    await lead.getByTestId("notice").filter({ hasText: "mate@example.com added to the team." }).waitFor();
    await lead.getByRole("rowheader", { name: "mate@example.com" }).waitFor();

    await lead.getByRole("button", { name: "Generate team key" }).click();
    const generate = lead.getByRole("dialog", { name: "Generate a key for team search" });
    await generate.getByLabel("Name").fill("indexer");
    await generate.getByRole("button", { name: "Generate", exact: true }).click();
    await lead.getByTestId("new-key").waitFor();
    await expect.poll(() => focused(lead)).toBe("PRE:new-key");
    teamKey = ((await lead.getByTestId("new-key").textContent()) ?? "").trim();
    expect(teamKey).toMatch(/^sk-/);
    expect(await violations(lead)).toEqual([]);
    await lead.getByRole("button", { name: "I've saved it" }).click();
    await lead.getByTestId("key-row").filter({ hasText: "indexer" }).first().waitFor();
    expect(await lead.locator("main").textContent()).not.toContain(teamKey);

    const reply = await ctx.stack.gateway
      .clientWith(teamKey)
      .chat.completions.create({ model: "general", messages: [{ role: "user", content: "index" }] });
    expect(reply.choices.length).toBe(1);
    const { info } = await ctx.stack.admin.keyInfo(teamKey);
    const team = (await ctx.stack.admin.listTeams()).find((t) => t.team_alias === "search");
    expect(info).toMatchObject({ team_id: team?.team_id, user_id: null, key_alias: "indexer" });

    // The call shows in the team's spend by member (the service keys), key and model.
    await waitFor(
      "the team key's call booked",
      async () => (await ctx.stack.admin.spendLogs({ api_key: info.token })).length > 0,
    );
    await lead.reload();
    await lead.getByRole("button", { name: "Open team search" }).click();
    await lead.getByText("7 days", { exact: true }).click();
    const byModel = lead.getByRole("figure", { name: "Spend by model" });
    await byModel.getByText("Show as a table").click();
    const modelRow = byModel.locator("tbody tr").first();
    await expect(modelRow.locator("th").textContent()).resolves.toBe("general");
    await expect(modelRow.locator("td").nth(1).textContent()).resolves.toBe("1"); // requests
    const byMember = lead.getByRole("figure", { name: "Spend by member" });
    await byMember.getByText("Show as a table").click();
    await expect(byMember.locator("table tbody").textContent()).resolves.toContain("Service keys");
    await expect(
      lead.getByTestId("key-row").filter({ hasText: "indexer" }).first().textContent(),
    ).resolves.toContain("limits of team search");
    expect(await violations(lead)).toEqual([]);
    for (const viewport of [WIDE, PHONE]) {
      await lead.setViewportSize(viewport);
      await lead.waitForTimeout(150); // charts re-measure on resize
      await lead.evaluate("window.scrollTo(0, 0)"); // the fixed header at the top of the full-page shot
      await lead.screenshot({ path: join(shots, `console-teams-${viewport.width}.png`), fullPage: true });
      expect(await violations(lead)).toEqual([]);
    }
    await lead.setViewportSize(WIDE);
  }, 90_000);

  it("the member sees the team and their own share, not its members or keys", async () => {
    await mate.reload();
    const row = mate.getByRole("row").filter({ hasText: "search" });
    await expect(row.textContent()).resolves.toContain("Member");
    await mate.getByRole("button", { name: "Open team search" }).click();
    await mate.getByTestId("own-share").waitFor();
    await expect(mate.getByTestId("own-share").textContent()).resolves.toMatch(
      /Your share: \$0\.00.*your budget in the team of \$5\.00/,
    );
    expect(await mate.getByRole("button", { name: "Add member" }).count()).toBe(0);
    expect(await mate.getByRole("button", { name: "Generate team key" }).count()).toBe(0);
    const text = (await mate.locator("main").textContent()) ?? "";
    expect(text).not.toContain("lead@example.com");
    expect(text).not.toContain("indexer");
    expect(await violations(mate)).toEqual([]);
  }, 60_000);

  it("the administrator blocks and unblocks the team from its panel, told by a notice that takes the focus", async () => {
    await operator.reload();
    await operator.getByRole("button", { name: "Open team search" }).click();
    await operator.getByRole("heading", { name: /Team search/ }).waitFor();
    expect(await violations(operator)).toEqual([]);
    await operator.getByRole("button", { name: "Block", exact: true }).click();
    await operator.getByTestId("notice").filter({ hasText: "Team search blocked" }).waitFor();
    await expect.poll(() => focused(operator)).toBe("DIV:notice");
    await operator.getByRole("button", { name: "Unblock", exact: true }).waitFor();
    const team = (await ctx.stack.admin.listTeams()).find((t) => t.team_alias === "search");
    expect(team?.blocked).toBe(true);
    await expect(operator.getByRole("rowheader", { name: /search/ }).textContent()).resolves.toContain(
      "blocked",
    );
    await operator.getByRole("button", { name: "Unblock", exact: true }).click();
    await operator.getByTestId("notice").filter({ hasText: "Team search unblocked." }).waitFor();
    expect((await ctx.stack.admin.teamInfo(team?.team_id ?? "")).team_info.blocked).toBe(false);
    expect(await violations(operator)).toEqual([]);
    expect(ctx.consoleErrors).toEqual([]);
  }, 60_000);
});
