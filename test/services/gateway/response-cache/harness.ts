/**
 * A whole gateway (createGateway: virtual keys in Postgres, limits and the response cache on the machine's Redis
 * under a prefix of its own, the PII guardrail masking e-mail addresses) in front of the OpenAI-compatible fake,
 * with `litellm_settings.cache: true`, for the response cache suites.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { GatewayOptions } from "../../../../services/gateway/src/gateway.js";
import type { FakeUpstream } from "../../../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { REDIS_URL, waitFor } from "../../../helpers/redis.js";

/** $0.0001 / $0.0002 per token: every answer costs something, so a hit saves something. */
export const PRICED = "      input_cost_per_token: 0.0001\n      output_cost_per_token: 0.0002\n";

const POLICY = `guardrails:
  pii:
    mode: enforce
    entities: {EMAIL_ADDRESS: MASK}
  prompt_injection:
    mode: "off"
`;

/** A gateway with the cache on; `cacheParams` are `cache_params` lines (indented four spaces). */
export async function startCachedGateway(
  upstream: FakeUpstream,
  options: {
    databaseUrl: string;
    prefix: string;
    cacheParams?: string;
    redisUrl?: string;
    /** More `model_list` entries (YAML list items). */
    moreModels?: string;
    /** Connections of the gateway's pool (1 on the embedded PGlite database). */
    poolMax?: number;
    /** The guardrail policy (GUARDRAIL_POLICY's YAML); the PII guard masking e-mail addresses by default. */
    policy?: string;
    /** The semantic cache's sweeper tuning (createGateway's `semanticSweep`). */
    semanticSweep?: GatewayOptions["semanticSweep"];
  },
): Promise<TestGateway> {
  const policyPath = join(mkdtempSync(join(tmpdir(), "gw-cache-")), "policy.yaml");
  writeFileSync(policyPath, options.policy ?? POLICY);
  const config = [
    "model_list:",
    deployment("general", upstream.url, PRICED),
    options.moreModels ?? "",
    "litellm_settings:",
    "  cache: true",
    "  cache_params:",
    options.cacheParams ?? "    type: redis\n    ttl: 120",
    "",
  ].join("\n");
  return startTestGateway(
    config,
    {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl ?? REDIS_URL,
      GUARDRAIL_POLICY: policyPath,
    },
    {
      store: { flushIntervalMs: 50, ...(options.poolMax === undefined ? {} : { poolMax: options.poolMax }) },
      limits: { keyPrefix: options.prefix },
      ...(options.semanticSweep === undefined ? {} : { semanticSweep: options.semanticSweep }),
    },
  );
}

/** A new virtual key (`body`: /key/generate's); its plaintext and its hash. */
export async function newKey(
  gw: TestGateway,
  body: Record<string, unknown> = {},
): Promise<{ key: string; token: string }> {
  const res = await adminCall<{ key: string; token: string }>(gw, "POST", "/key/generate", body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** POSTs `body` to `path` with `key`. */
export function post(gw: TestGateway, key: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** One spend log row as /spend/logs gives it (the fields the suites read). */
export interface LoggedCall {
  request_id: string;
  spend: number;
  cache_hit: boolean;
  cache_key: string | null;
  cache_saved_spend: number;
  total_tokens: number;
  status: number;
  stream: boolean;
}

/** Waits until /spend/logs has `count` rows of the key `token`; returns them, oldest first. */
export async function spendLogs(gw: TestGateway, token: string, count: number): Promise<LoggedCall[]> {
  let rows: LoggedCall[] = [];
  await waitFor(`${count} spend rows`, async () => {
    rows = (await adminCall<LoggedCall[]>(gw, "GET", `/spend/logs?api_key=${token}&limit=100`)).body;
    return Array.isArray(rows) && rows.length >= count;
  });
  return [...rows].reverse();
}
