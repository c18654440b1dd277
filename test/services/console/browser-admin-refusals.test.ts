/**
 * The operator's Platform spend in Chromium against a real gateway with a PII guardrail and the response cache on:
 * the platform's refused and failed calls broken down by reason (budget, rate limit, guardrail, provider error)
 * and the answers served from the response cache with what they saved, beside the platform's spend (issue 34:
 * refused and failed calls for the operator; `/spend/usage`'s `by_reason`, `cache_hits`, `cache_saved_spend`).
 * axe-core finds no violation on the Admin view at 1440 and 390 px. Screenshots (console-platform-spend-*.png) go
 * to test-results/console, or to docs/screenshots with CONSOLE_SCREENSHOTS=docs.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  a11yViolations,
  type BrowserConsole,
  SHOTS,
  skipReason,
  useBrowserConsole,
} from "../../helpers/console-browser.js";
import { MASTER_KEY } from "../../helpers/gateway.js";
import { waitFor } from "../../helpers/redis.js";
import { CARD } from "../gateway/guardrails/helpers.js";

const POLICY = "guardrails:\n  pii:\n    mode: enforce\n    entities: {CREDIT_CARD: BLOCK}\n";
const shots = SHOTS;
const CACHE = "litellm_settings:\n  cache: true\n  cache_params:\n    type: local\n";

let ctx: BrowserConsole;
let page: Page;

/** One chat call with `key`; its HTTP status. */
async function chat(key: string, content: string): Promise<number> {
  const res = await fetch(`${ctx.stack.gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "general", messages: [{ role: "user", content }], max_tokens: 20 }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe.skipIf(skipReason !== undefined)(
  `Platform spend: refusals by reason, cache hits ${skipReason ?? ""}`,
  () => {
    const options = () => {
      mkdirSync(shots, { recursive: true });
      const policy = join(mkdtempSync(join(tmpdir(), "console-admin-refusals-")), "policy.yaml");
      writeFileSync(policy, POLICY);
      delete process.env.PII_ANALYZER_API_BASE;
      return { chat: false, gatewayConfig: CACHE, gatewayEnv: { GUARDRAIL_POLICY: policy } };
    };
    ctx = useBrowserConsole(undefined, options, async () => {
      page = ctx.page;
      const admin = ctx.stack.admin;
      await admin.newUser({ user_id: "dev-1", user_email: "dev@example.com" });
      // Keys of a user and of no user: Platform spend counts both.
      const open = await admin.generateKey({ user_id: "dev-1", key_alias: "open" });
      const hasty = await admin.generateKey({ key_alias: "hasty", rpm_limit: 1 });
      const broke = await admin.generateKey({ user_id: "dev-1", key_alias: "broke", max_budget: 0.0001 });
      expect(await chat(open.key, "the same question")).toBe(200);
      expect(await chat(open.key, "the same question")).toBe(200); // from the response cache
      expect(await chat(hasty.key, "first")).toBe(200);
      expect(await chat(hasty.key, "second")).toBe(429); // rate limit
      expect(await chat(broke.key, "anything")).toBe(429); // budget
      expect(await chat(open.key, `Charge ${CARD} please`)).toBe(400); // guardrail
      ctx.stack.upstream.failNext(10, 500);
      expect(await chat(open.key, "the provider fails")).toBeGreaterThanOrEqual(500); // provider error
      await waitFor("seven calls logged", async () => (await admin.usage({ days: 7 })).totals.requests === 7);
    });

    it("breaks the refused and failed calls down by reason and shows the response cache's hits and saving", async () => {
      await page.goto(`${ctx.stack.url}/admin/login`);
      await page.getByLabel("Master key").fill(MASTER_KEY);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByTestId("requests-stat").waitFor();
      await expect(page.getByTestId("requests-stat").textContent()).resolves.toContain(
        "3 answered · 3 refused · 1 failed",
      );
      // A row's cells, tab-separated as innerText gives them.
      const rows = (await page.getByTestId("calls-by-reason").locator("tbody tr").allInnerTexts()).map(
        (row) =>
          row
            .split("\t")
            .map((cell) => cell.replace(/\s+/g, " ").trim())
            .join(" | "),
      );
      // Refusals first, then failures; each with its share of the 7 requests.
      expect(rows.slice(0, 3).sort()).toEqual(
        [
          "budget | Refused | 1 | 14.3 %",
          "guardrail | Refused | 1 | 14.3 %",
          "rate limit | Refused | 1 | 14.3 %",
        ].sort(),
      );
      expect(rows.slice(3)).toEqual(["provider error | Failed | 1 | 14.3 %"]);

      const { totals } = await ctx.stack.admin.usage({ days: 7 });
      expect(totals.cache_hits).toBe(1);
      expect(totals.cache_saved_spend).toBeGreaterThan(0);
      const cache = (await page.getByTestId("response-cache").textContent()) ?? "";
      expect(cache).toContain("Answered from the gateway's cache1");
      expect(cache).toContain("14 % of requests");
      // What the hit would have cost, with enough digits to be more than $0.
      expect(cache).toMatch(/Saved by the response cache\$0\.0*[1-9]/);
    }, 60_000);

    it("has no axe-core violation on the Admin view at 1440 and 390 px", async () => {
      const found: string[] = [];
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 390, height: 844 },
      ]) {
        await page.setViewportSize(viewport);
        await page.goto(`${ctx.stack.url}/admin`);
        await page.getByTestId("calls-by-reason").waitFor();
        await page.waitForLoadState("networkidle");
        await page.screenshot({
          path: join(shots, `console-platform-spend-${viewport.width}.png`),
          fullPage: true,
        });
        for (const v of await a11yViolations(page)) {
          found.push(
            `admin at ${viewport.width} px: ${v.id} (${v.impact}) ${v.help} — ${v.targets.join(", ")}`,
          );
        }
        // Nothing wider than the screen.
        const overflow = await page.evaluate<number>(
          "document.documentElement.scrollWidth - window.innerWidth",
        );
        expect(overflow, `sideways scroll at ${viewport.width} px`).toBeLessThanOrEqual(0);
      }
      expect(found).toEqual([]);
    }, 90_000);
  },
);
