/**
 * A key's MCP grants in Chromium against a real gateway with a real SDK-made MCP server upstream: the
 * console administrator sees the declared server and its tools (`<server>-<tool>`) in All keys, chooses the
 * server and one of its tools for a key in the edit dialog, and the gateway saves the key's
 * `object_permission` (audited as the administrator); the key then lists exactly that tool on `/mcp`; a key
 * generated in the Admin view gets its server the same way, and so does a team in the Teams view (Edit team),
 * whose keys then list that tool. The user's own generate and edit dialogs (API keys) have no MCP field.
 * Screenshots at 1440×900 and 390×844, axe-core clean.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BrowserConsole,
  shootBoth,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { mcpClient, startMcpServer, type TestMcpServer } from "../../helpers/mcp-server.js";

let ctx: BrowserConsole;
let page: Page;
let upstream: TestMcpServer;

describe.skipIf(skipReason !== undefined)(`MCP grants in the console in Chromium ${skipReason ?? ""}`, () => {
  // Started before the console (whose gateway config names it), closed after it (hooks run as a stack).
  beforeAll(async () => {
    upstream = await startMcpServer();
  });
  afterAll(async () => {
    await upstream?.close();
  });
  // The first chat account (ada) is the console's administrator: it has API keys and All keys.
  ctx = useBrowserConsole(
    undefined,
    () => ({
      gatewayConfig: `mcp_servers:\n  tools:\n    url: ${upstream.url}\n    description: the test's tools\n`,
    }),
    async () => {
      page = ctx.page;
    },
  );

  it("the user's own generate and edit dialogs have no MCP field", async () => {
    await page.goto(`${ctx.stack.url}/keys`); // the first visit provisions ada's gateway user
    await page.getByRole("button", { name: "Generate key" }).waitFor();
    await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "own-key" });
    await page.reload();
    await page.getByRole("button", { name: "Generate key" }).click();
    const generate = page.getByRole("dialog", { name: "Generate a key" });
    await generate.getByLabel("Name").waitFor();
    expect(await generate.getByTestId("mcp-grant").count()).toBe(0);
    await generate.getByRole("button", { name: "Cancel" }).click();
    await generate.waitFor({ state: "detached" });
    const row = page.getByTestId("key-row").filter({ hasText: "own-key" });
    await row.getByRole("button", { name: /^Edit/ }).locator("visible=true").click();
    const dialog = page.getByRole("dialog", { name: /^Edit key/ });
    await dialog.getByLabel("Name").waitFor();
    expect(await dialog.getByLabel("MCP servers").count()).toBe(0);
    expect(await dialog.getByTestId("mcp-grant").count()).toBe(0);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
  }, 60_000);

  it("lists the server and its tools, then grants a key the server narrowed to one tool", async () => {
    const made = await ctx.stack.admin.generateKey({ user_id: ctx.userId, key_alias: "agent" });
    await page.goto(`${ctx.stack.url}/all-keys`);
    const servers = page.getByTestId("mcp-servers");
    await servers.getByText("tools-add").waitFor();
    expect(await servers.textContent()).toContain("granted keys");
    const violations = await shootBoth(page, "mcp-servers");

    await page
      .getByTestId("key-row")
      .filter({ hasText: "agent" })
      .getByRole("button", { name: /^Edit/ })
      .locator("visible=true")
      .click();
    const dialog = page.getByRole("dialog", { name: /^Edit key/ });
    await dialog.getByLabel("MCP servers").click();
    await page.getByRole("option", { name: "tools", exact: true }).click();
    await dialog.getByLabel("Tools of tools").click();
    await page.getByRole("option", { name: "add", exact: true }).click();
    await dialog.getByLabel("Name").click(); // closes the list
    violations.push(...(await shootBoth(page, "mcp-grant-dialog")));
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("The key agent is changed").waitFor();

    const { info } = await ctx.stack.admin.keyInfo(made.token);
    expect(info.object_permission).toEqual({
      mcp_servers: ["tools"],
      mcp_tool_permissions: { tools: ["add"] },
    });
    const audit = (await ctx.stack.admin.auditLogs({ key_hash: made.token, action: "key.update" })).logs;
    expect(audit.map((r) => r.actor)).toEqual([`console:user:${ctx.userId}`]);

    const client = await mcpClient(ctx.stack.gateway.url, { authorization: `Bearer ${made.key}` });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["tools-add"]);
    } finally {
      await client.close();
    }
    expect(violations).toEqual([]);
  }, 90_000);

  it("generates a key of no user with an MCP server granted, in the Admin view", async () => {
    await page.goto(`${ctx.stack.url}/admin`);
    await page.getByRole("button", { name: "Generate key", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: "Generate a key" });
    await dialog.getByLabel("Name").fill("ops-agent");
    await dialog.getByLabel("MCP servers").click();
    await page.getByRole("option", { name: "tools", exact: true }).click();
    await dialog.getByLabel("Name").click(); // closes the list
    const violations = await shootBoth(page, "mcp-generate-dialog");
    await dialog.getByRole("button", { name: "Generate", exact: true }).click();
    const key = ((await page.getByTestId("new-key").textContent()) ?? "").trim();
    expect(key).toMatch(/^sk-/);
    const { info } = await ctx.stack.admin.keyInfo(key);
    expect(info).toMatchObject({ key_alias: "ops-agent", object_permission: { mcp_servers: ["tools"] } });
    expect(violations).toEqual([]);
  }, 90_000);

  it("grants a team a server narrowed to one tool in the Teams view (Edit team, the key dialogs' field); the team's keys inherit it", async () => {
    const team = await ctx.stack.admin.newTeam({ team_alias: "tool-team" });
    await page.goto(`${ctx.stack.url}/teams`);
    await page.getByRole("button", { name: "Open team tool-team" }).click();
    await page.getByRole("heading", { name: /Team tool-team/ }).waitFor();
    await page.getByRole("button", { name: "Edit team" }).click();
    const dialog = page.getByRole("dialog", { name: "Team tool-team" });
    await dialog.getByLabel("MCP servers").click();
    await page.getByRole("option", { name: "tools", exact: true }).click();
    await dialog.getByLabel("Tools of tools").click();
    await page.getByRole("option", { name: "echo", exact: true }).click();
    await dialog.getByLabel("Team name", { exact: false }).click(); // closes the list
    const violations = await shootBoth(page, "mcp-team-grant-dialog");
    await dialog.getByRole("button", { name: "Save" }).click();
    await page.getByText("Team tool-team saved.").waitFor();

    const grant = { mcp_servers: ["tools"], mcp_tool_permissions: { tools: ["echo"] } };
    expect((await ctx.stack.admin.teamInfo(team.team_id)).team_info.object_permission).toEqual(grant);
    const teamKey = await ctx.stack.admin.generateKey({ team_id: team.team_id });
    const client = await mcpClient(ctx.stack.gateway.url, { authorization: `Bearer ${teamKey.key}` });
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["tools-echo"]);
    } finally {
      await client.close();
    }

    // Opened again, the dialog shows the saved grant.
    await page.getByRole("button", { name: "Edit team" }).click();
    const again = page.getByRole("dialog", { name: "Team tool-team" });
    await again.getByTestId("mcp-grant").getByText("echo").waitFor();
    await again.getByRole("button", { name: "Cancel" }).click();
    expect(violations).toEqual([]);
  }, 90_000);
});
