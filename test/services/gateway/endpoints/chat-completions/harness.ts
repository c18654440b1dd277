/**
 * A gateway app built with buildApp(deps) for the chat-path suites: a real router and metrics, the fake
 * upstream behind one alias (`general`, priced per token), one virtual key whose limits are the given subjects,
 * and optional guard, observers and admitter (default: a fresh in-process admitter).
 */
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../../../../services/gateway/src/app.js";
import type { KeyAuthenticator, VirtualKeyAuth } from "../../../../../services/gateway/src/auth/types.js";
import { loadModelConfig } from "../../../../../services/gateway/src/config/load-model-config.js";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import type { Limits } from "../../../../../services/gateway/src/limits/index.js";
import { InProcessAdmitter } from "../../../../../services/gateway/src/limits/memory-admitter.js";
import type { Admitter, LimitSubject } from "../../../../../services/gateway/src/limits/types.js";
import { createMetrics, type GatewayMetrics } from "../../../../../services/gateway/src/metrics/metrics.js";
import type { CallObserver } from "../../../../../services/gateway/src/pipeline/types.js";
import type { ResponseOwners } from "../../../../../services/gateway/src/response-owners/types.js";
import { CapIgnorers } from "../../../../../services/gateway/src/router/cap-ignorers.js";
import { Router } from "../../../../../services/gateway/src/router/router.js";
import type { SpendLogRow, SpendRecorder } from "../../../../../services/gateway/src/spend/types.js";
import { systemClock } from "../../../../../services/gateway/src/time/clock.js";
import { deployment, writeConfig } from "../../../../helpers/gateway.js";

/** The virtual key every harness accepts. */
export const VIRTUAL_KEY = "sk-virtual-chat-harness";

export interface ChatHarnessOptions {
  /** The fake upstream's base URL (ending in /v1). */
  upstreamUrl: string;
  /** USD per token, input and output. Default 0.00001 each. */
  pricePerToken?: number;
  /** The key's limits (budgets, rpm, tpm). */
  subjects?: LimitSubject[];
  guard?: CallGuard;
  observers?: CallObserver[];
  admitter?: Admitter;
  /**
   * A gateway instance's limits (`test/helpers/limits.ts`): its admitter (unless `admitter` is given), and its
   * Redis connection and bus for the deployments marked as ignoring output caps (`router/cap-ignorers.ts`), so
   * that two harnesses on limits under one prefix share the marks as two instances do.
   */
  limits?: Limits;
  /** Receives the spend rows (default: none kept). */
  spend?: SpendRecorder;
  /** The deployment's `litellm_params.model` (default `openai/fake-model`). */
  upstreamModel?: string;
  /** More `litellm_params` lines for the deployment, e.g. `      stream_timeout: 0.3\n`. */
  extraParams?: string;
  /**
   * More config after the `general` deployment: other `model_list` entries (indented as list items), then
   * top-level sections such as `litellm_settings` (fallbacks).
   */
  moreConfig?: string;
  /** The key's `models` (aliases it may use; default: every alias). */
  models?: string[];
  /** The gateway's stream bounds (PipelineDeps.streams). */
  maxStreamDurationMs?: number;
  /** More virtual keys, by plaintext key: each is the harness key's twin with this key hash (its own owner). */
  moreKeys?: Record<string, string>;
  /** The master key (default: none). */
  masterKey?: string;
  /** The response ownership registry (default: the app's in-process one). */
  responseOwners?: ResponseOwners;
  /** PipelineDeps.streamClientIdleTimeoutMs (`stream_client_idle_timeout`), ms; default the gateway's (60 s). */
  clientIdleTimeoutMs?: number;
  /**
   * The config's whole `model_list:` section (YAML) instead of the one `general` deployment at `upstreamUrl`
   * (`pricePerToken`, `upstreamModel` and `extraParams` then do not apply).
   */
  modelList?: string;
}

export interface ChatHarness {
  app: FastifyInstance;
  metrics: GatewayMetrics;
  router: Router;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** POST /v1/chat/completions with the virtual key; `body` is sent as JSON unless it is a string. */
  chat(body: Record<string, unknown> | string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** Builds and starts the app on an ephemeral port. */
export async function startChatHarness(options: ChatHarnessOptions): Promise<ChatHarness> {
  const price = options.pricePerToken ?? 0.00001;
  const modelList =
    options.modelList ??
    [
      "model_list:",
      deployment(
        "general",
        options.upstreamUrl,
        `      input_cost_per_token: ${price}\n      output_cost_per_token: ${price}\n${options.extraParams ?? ""}`,
      ).replace("openai/fake-model", options.upstreamModel ?? "openai/fake-model"),
    ].join("\n");
  const config = loadModelConfig(writeConfig([modelList, options.moreConfig ?? ""].join("\n")));
  const subjects = options.subjects ?? [];
  const auth: VirtualKeyAuth = {
    kind: "virtual",
    keyHash: subjects[0]?.id ?? "0".repeat(64),
    keyAlias: "harness",
    userId: null,
    models: options.models ?? [],
    expiresAt: null,
    subjects,
    namesUsers: false,
  };
  const others = new Map(
    Object.entries(options.moreKeys ?? {}).map(([key, keyHash]) => [key, { ...auth, keyHash }]),
  );
  const keys: KeyAuthenticator = {
    authenticate: async (key) => (key === VIRTUAL_KEY ? auth : (others.get(key) ?? null)),
  };
  const metrics = createMetrics();
  const { limits } = options;
  const capIgnorers = new CapIgnorers({
    clock: systemClock,
    deployments: config.deployments,
    redis: limits?.redis,
    bus: limits?.bus,
  });
  const router = new Router(config, metrics, systemClock, { capIgnorers });
  const app = buildApp({
    router,
    metrics,
    clock: systemClock,
    masterKey: options.masterKey,
    maxBodyBytes: 4_000_000,
    keys,
    admitter: options.admitter ?? limits?.admitter ?? new InProcessAdmitter({ clock: systemClock }),
    readiness: [],
    version: "test",
    ...(options.spend === undefined ? {} : { spend: options.spend }),
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.responseOwners === undefined ? {} : { responseOwners: options.responseOwners }),
    ...(options.observers === undefined ? {} : { observers: options.observers }),
    ...(options.maxStreamDurationMs === undefined
      ? {}
      : { maxStreamDurationMs: options.maxStreamDurationMs }),
    ...(options.clientIdleTimeoutMs === undefined
      ? {}
      : { streamClientIdleTimeoutMs: options.clientIdleTimeoutMs }),
  });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    app,
    metrics,
    router,
    url,
    chat: (body, init = {}) =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
        ...init,
      }),
    close: async () => {
      await app.close();
      capIgnorers.close();
    },
  };
}

/** A {@link SpendRecorder} that keeps the rows in memory (what the Postgres recorder would write). */
export function rowsRecorder(): SpendRecorder & { rows: SpendLogRow[] } {
  const rows: SpendLogRow[] = [];
  return { rows, record: (row) => rows.push(row), flush: async () => {} };
}
