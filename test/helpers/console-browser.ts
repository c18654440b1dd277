/**
 * The console in Debian's Chromium (playwright-core): builds the web bundle from the current source, starts
 * the console stack serving it, signs a chat user in with a cookie minted as LibreChat mints it (or, in
 * operator-only mode, leaves signing in to the test), and checks pages with axe-core (injected through the DevTools protocol, so the console's CSP does not block it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type ConsoleStack, JWT_REFRESH_SECRET, startConsoleStack } from "./console.js";

/** Debian's Chromium. */
export const CHROMIUM = "/usr/bin/chromium";
const repoRoot = join(import.meta.dirname, "../..");
/** Where screenshots go: test-results/console, or docs/screenshots with CONSOLE_SCREENSHOTS=docs (docs/console.md's). */
export const SHOTS =
  process.env.CONSOLE_SCREENSHOTS === "docs"
    ? join(repoRoot, "docs/screenshots")
    : join(repoRoot, "test-results/console");
/** The two widths every page is checked at, with their heights. */
export const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

/** Why browser tests are skipped here, or undefined (Chromium present). */
export const skipReason = existsSync(CHROMIUM) ? undefined : `(skipped: no Chromium at ${CHROMIUM})`;

/** A console stack with a browser, a context carrying the chat cookie of `userId`, and one page. */
export interface BrowserConsole {
  stack: ConsoleStack;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The chat user signed in by cookie; "" in operator-only mode (no chat). */
  userId: string;
  /** Console messages of level error seen by `page` (e.g. a blocked script, a missing favicon). */
  consoleErrors: string[];
  close(): Promise<void>;
}

/** How {@link startBrowserConsole} starts the stack. */
export interface BrowserConsoleOptions {
  /** false: the console without a chat (operator-only mode): no user, no cookie. */
  chat?: boolean;
  /** More gateway config (YAML) for the stack's gateway. */
  gatewayConfig?: string;
  /** Extra gateway environment (e.g. GUARDRAIL_POLICY). */
  gatewayEnv?: Record<string, string>;
}

/**
 * Builds the bundle, starts the stack, registers `email` (the first account is ADMIN) and opens a page.
 * `chat: false` runs the console without a chat (operator-only mode): no user, no cookie. `gatewayEnv`: extra
 * gateway environment (e.g. GUARDRAIL_POLICY).
 */
export async function startBrowserConsole(
  email = "ada@example.com",
  options: BrowserConsoleOptions = {},
): Promise<BrowserConsole> {
  const chat = options.chat !== false;
  execFileSync(
    "npx",
    ["vite", "build", "--config", "services/console/web/vite.config.ts", "--logLevel", "error"],
    { cwd: repoRoot, stdio: "inherit" },
  );
  mkdirSync(SHOTS, { recursive: true });
  const stack = await startConsoleStack({
    webRoot: join(repoRoot, "services/console/dist/web"),
    chat,
    ...(options.gatewayConfig === undefined ? {} : { gatewayConfig: options.gatewayConfig }),
    ...(options.gatewayEnv === undefined ? {} : { gatewayEnv: options.gatewayEnv }),
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const context = await browser.newContext({ viewport: VIEWPORTS[0] });
  let userId = "";
  if (chat) {
    userId = stack.mongo.register(email);
    await addChatCookie(context, stack, userId);
  }
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  return {
    stack,
    browser,
    context,
    page,
    userId,
    consoleErrors,
    async close() {
      await browser.close();
      await stack.close();
    },
  };
}

/**
 * Starts a browser console ({@link startBrowserConsole}) for the `describe` block (or file) it is called in:
 * a `beforeAll` (180 s: the bundle build and Chromium) starts it and then runs `setUp` on it, an `afterAll`
 * closes it. `options` may be a function, read when the hook runs (after the block's earlier `beforeAll`s, e.g.
 * one starting a server whose URL the gateway config names). Returns the console: its members are read when
 * used, and throw before the hook has started it.
 */
export function useBrowserConsole(
  email?: string,
  options: BrowserConsoleOptions | (() => BrowserConsoleOptions) = {},
  setUp?: (started: BrowserConsole) => Promise<void>,
): BrowserConsole {
  let started: BrowserConsole | undefined;
  beforeAll(async () => {
    started = await startBrowserConsole(email, typeof options === "function" ? options() : options);
    await setUp?.(started);
  }, 180_000);
  afterAll(async () => {
    await started?.close();
  });
  const now = (): BrowserConsole => {
    if (started === undefined) throw new Error("the browser console has not started");
    return started;
  };
  return {
    get stack() {
      return now().stack;
    },
    get browser() {
      return now().browser;
    },
    get context() {
      return now().context;
    },
    get page() {
      return now().page;
    },
    get userId() {
      return now().userId;
    },
    get consoleErrors() {
      return now().consoleErrors;
    },
    close: () => now().close(),
  };
}

/**
 * Signs chat user `userId` in to `context` as the chat would: a new chat session and its `refreshToken` cookie
 * (host-only on localhost, httpOnly; the console shares it across ports).
 */
export async function addChatCookie(
  context: BrowserContext,
  stack: ConsoleStack,
  userId: string,
): Promise<void> {
  const { refreshToken } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
  await context.addCookies([
    {
      name: "refreshToken",
      value: refreshToken,
      domain: "localhost",
      path: "/",
      httpOnly: true,
      sameSite: "Lax",
    },
  ]);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** One axe-core violation, as much as a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core (WCAG 2 A/AA rules and best practices) on `page`; returns every violation. */
export async function a11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string: the test project has no DOM types; this runs in the page.
  return page.evaluate<AxeViolation[]>(`(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return result.violations
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) }));
  })()`);
}

/** The serious and critical violations of {@link a11yViolations}. */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  return (await a11yViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Screenshots `page` as `console-<name>-<width>.png` at both {@link VIEWPORTS} (full page, into {@link SHOTS}) and returns its serious
 * and critical axe-core violations at each width, one line each; leaves the page at the first width.
 */
export async function shootBoth(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150); // charts and dialogs re-measure on resize
    await page.screenshot({ path: join(SHOTS, `console-${name}-${viewport.width}.png`), fullPage: true });
    for (const v of await seriousA11yViolations(page)) {
      found.push(`${name} at ${viewport.width} px: ${v.id} ${v.help} — ${v.targets.join(", ")}`);
    }
  }
  await page.setViewportSize(VIEWPORTS[0]);
  return found;
}
