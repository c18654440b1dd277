/**
 * Starts the whole console setup for a test file: a fake OpenAI upstream, a real gateway on its own Postgres
 * database and Redis prefix, the LibreChat Mongo contract fake, and the console listening on an ephemeral
 * port, with a log capture for "no secret in the logs" assertions.
 */
import { AdminApiClient } from "@platform/admin-api";
import type OpenAI from "openai";
import { buildApp, type ConsoleApp } from "../../services/console/server/app.js";
import { type ConsoleConfig, readConsoleEnv } from "../../services/console/server/config.js";
import { createLogger } from "../../services/console/server/logger.js";
import { openSessionBackend } from "../../services/console/server/session/open-backend.js";
import { OperatorOnlyStore } from "../../services/console/server/session/operator-only-store.js";
import { FakeLibreChatMongo } from "../fixtures/librechat-mongo.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "./gateway.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { deleteKeys, REDIS_URL, uniquePrefix, waitFor } from "./redis.js";

/** The chat's refresh-token secret in tests. */
export const JWT_REFRESH_SECRET = "test-jwt-refresh-secret-0123456789abcdef";
/** USD per token: large enough that one request costs something visible; a cache read a tenth of an input token. */
const PRICED =
  "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n      cache_read_input_token_cost: 0.00001\n";

/** A running console with everything behind it. */
export interface ConsoleStack {
  /** Console base URL, e.g. http://localhost:4321 (localhost: cookies are not Secure there). */
  url: string;
  console: ConsoleApp;
  config: ConsoleConfig;
  gateway: TestGateway;
  mongo: FakeLibreChatMongo;
  upstream: FakeUpstream;
  /** Every console log line (pino JSON, as the console writes it at level debug). */
  logs: string[];
  /** A typed admin client of the gateway (for arranging and checking). */
  admin: AdminApiClient;
  /** Moves the console's clock (sessions, JWT expiry checks), ms. */
  advance(ms: number): void;
  /**
   * Starts another console process on the same settings (a replica, or the console after a restart), with
   * its own session backend opened from the settings (REDIS_URL, DATABASE_URL, else memory); its base URL.
   */
  replica(): Promise<{ url: string; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** Options of {@link startConsoleStack}. */
export interface ConsoleStackOptions {
  /** Extra console environment (e.g. ADMIN_SESSION_IDLE_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** Extra gateway environment (e.g. GUARDRAIL_POLICY). */
  gatewayEnv?: Record<string, string>;
  /** Built web bundle to serve (browser tests), or null. */
  webRoot?: string | null;
  /** false: no chat (no MONGO_URI), the console's operator-only mode. Default true (the Mongo fake). */
  chat?: boolean;
  /** More of the gateway's config file after `model_list` (e.g. an `mcp_servers:` section), YAML. */
  gatewayConfig?: string;
}

/** Starts upstream, gateway (Postgres + Redis), Mongo fake and console. */
export async function startConsoleStack(options: ConsoleStackOptions = {}): Promise<ConsoleStack> {
  const upstream = await startFakeUpstream();
  const db: TestDatabase = await createTestDatabase();
  const prefix = uniquePrefix("console");
  const gateway = await startTestGateway(
    `model_list:\n${deployment("general", upstream.url, PRICED)}${deployment("fast", upstream.url, PRICED)}${options.gatewayConfig ?? ""}`,
    { DATABASE_URL: db.url, REDIS_URL, ...options.gatewayEnv },
    { store: { flushIntervalMs: 100 }, limits: { keyPrefix: prefix } },
  );
  const mongo = new FakeLibreChatMongo();
  let offset = 0;
  const now = () => Date.now() + offset;
  const config = readConsoleEnv({
    PUBLIC_URL: "http://localhost:3001",
    CHAT_URL: "http://localhost:3080",
    GATEWAY_URL: gateway.url,
    GATEWAY_PUBLIC_URL: "http://localhost:4000",
    GATEWAY_MASTER_KEY: MASTER_KEY,
    JWT_REFRESH_SECRET,
    ...(options.chat === false ? {} : { MONGO_URI: "mongodb://unused-the-fake-stands-in" }),
    ...options.env,
  });
  const logs: string[] = [];
  const logger = createLogger("debug", { write: (line: string) => void logs.push(line) });
  const admin = new AdminApiClient({ baseUrl: gateway.url, masterKey: MASTER_KEY });
  const start = async () => {
    const sessionBackend = await openSessionBackend(config);
    const built = await buildApp({
      config,
      gateway: admin,
      store: options.chat === false ? new OperatorOnlyStore() : mongo,
      webRoot: options.webRoot ?? null,
      now,
      loggerInstance: logger,
      sessionBackend,
    });
    built.app.addHook("onClose", () => sessionBackend.close());
    const address = await built.app.listen({ port: 0, host: "127.0.0.1" });
    return { app: built, url: address.replace("127.0.0.1", "localhost") };
  };
  const { app, url } = await start();
  return {
    url,
    console: app,
    config,
    gateway,
    mongo,
    upstream,
    logs,
    admin,
    advance: (ms) => {
      offset += ms;
    },
    async replica() {
      const started = await start();
      return { url: started.url, close: () => started.app.app.close() };
    },
    async close() {
      await app.app.close();
      await gateway.close();
      await upstream.close();
      await db.drop();
      await deleteKeys(prefix);
    },
  };
}

/** One response as a {@link Visitor} saw it. */
export interface VisitResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for other bodies. */
  body: T;
  text: string;
}

/**
 * A browser-like visitor of the console: keeps cookies, sends the page's Origin and the CSRF token on
 * state-changing requests (both can be overridden to act as an attacker), never follows redirects.
 */
export class Visitor {
  readonly cookies = new Map<string, string>();
  csrfToken: string | undefined;
  /** Every response body seen, for "the full key never appears again" checks. */
  readonly seen: string[] = [];

  constructor(readonly baseUrl: string) {}

  /** Sets the chat's `refreshToken` cookie (as the chat's login would). */
  withChatCookie(refreshToken: string): this {
    this.cookies.set("refreshToken", refreshToken);
    return this;
  }

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; origin?: string | null } = {},
  ): Promise<VisitResponse<T>> {
    const headers: Record<string, string> = {
      cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
    };
    if (method !== "GET") {
      const origin = options.origin === undefined ? this.baseUrl : options.origin;
      if (origin !== null) headers.origin = origin;
      if (this.csrfToken !== undefined) headers["x-csrf-token"] = this.csrfToken;
    }
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: "manual",
      headers: { ...headers, ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, ...value] = (pair ?? "").split("=");
      if (name === undefined) continue;
      const v = value.join("=");
      if (v === "" || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), v);
    }
    const text = await res.text();
    this.seen.push(text);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body: body as T, text };
  }

  /** `GET /api/me`, remembering the CSRF token. */
  async me() {
    const res = await this.request<{ csrf_token: string } & Record<string, unknown>>("GET", "/api/me");
    if (res.status === 200) this.csrfToken = res.body.csrf_token;
    return res;
  }
}

/** Registers a chat account, signs it in, and returns a visitor carrying its cookie (signed in to the console). */
export async function chatVisitor(
  stack: ConsoleStack,
  email: string,
): Promise<{ visitor: Visitor; userId: string; sessionId: string }> {
  const userId = stack.mongo.register(email);
  const { refreshToken, sessionId } = await stack.mongo.signIn(userId, JWT_REFRESH_SECRET);
  const visitor = new Visitor(stack.url).withChatCookie(refreshToken);
  const me = await visitor.me();
  if (me.status !== 200) throw new Error(`sign-in of ${email} failed: ${me.status} ${me.text}`);
  return { visitor, userId, sessionId };
}

/** Waits until the gateway refuses `client`'s key with 401 (revocation reaches every cache within seconds). */
export async function waitUntilKeyRefused(client: OpenAI): Promise<void> {
  await waitFor("the revoked key refused", () =>
    client.chat.completions.create({ model: "general", messages: [{ role: "user", content: "again" }] }).then(
      () => false,
      (error: { status?: number }) => error.status === 401,
    ),
  );
}

/**
 * Starts a streamed chat call through `client` and leaves after its first chunk: the gateway books it with
 * status 499 (what the upstream sent is paid for). The upstream holds the rest of its stream until the
 * returned function is called (call it once the booking was seen, so that the gateway sees the client leave
 * before the stream ends).
 */
export async function leaveMidStream(
  upstream: FakeUpstream,
  client: OpenAI,
  model: string,
): Promise<() => void> {
  const hold = upstream.holdNextStream();
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: "left half way" }],
    stream: true,
  });
  await stream[Symbol.asyncIterator]().next();
  await hold.firstChunkSent;
  stream.controller.abort();
  return () => hold.release();
}
