/**
 * What the metrics micro-benchmarks (`bench/micro/record-call.ts`, `bench/micro/metric-series.ts`) record: one
 * deployment, callers with a key and a user each (their budget subjects), and one finished chat call's facts
 * through `services/gateway/src/metrics/record-call.ts` (`recordCallMetrics` then `recordRequest`), from this
 * checkout or, for a side-by-side run, another one's.
 */
import type { Deployment } from "../../services/gateway/src/config/types.js";
import type { LimitSubject } from "../../services/gateway/src/limits/types.js";
import * as recordCall from "../../services/gateway/src/metrics/record-call.js";

/** The two record-call functions a benchmark calls, from some checkout. */
export type RecordCall = Pick<typeof recordCall, "recordCallMetrics" | "recordRequest">;

/** The gateway's metrics object as a checkout's `createMetrics` returns it (its shape varies by checkout). */
export type AnyMetrics = Parameters<RecordCall["recordCallMetrics"]>[0];

/** A checkout's `createMetrics` and record-call functions. */
export interface MetricsVariant<M = AnyMetrics> {
  create: () => M;
  record: RecordCall;
}

/** This checkout's functions. */
export const thisCheckout = { record: recordCall };

/**
 * `<checkout>/services/gateway/src/metrics`'s `createMetrics` and record-call functions.
 * @throws when the checkout has no such modules.
 */
export async function checkoutVariant<M>(checkout: string): Promise<MetricsVariant<M>> {
  const src = `${checkout}/services/gateway/src/metrics`;
  const metrics = (await import(`${src}/metrics.ts`)) as { createMetrics: () => M };
  const record = (await import(`${src}/record-call.ts`)) as RecordCall;
  return { create: metrics.createMetrics, record };
}

const deployment: Deployment = {
  id: "d1",
  modelName: "general",
  provider: "openai",
  upstreamModel: "gpt-4o-mini",
  apiBase: "http://upstream.local/v1",
  tags: [],
  created: 0,
};

const subject = (scope: LimitSubject["scope"], id: string): LimitSubject => ({
  scope,
  id,
  rpmLimit: null,
  tpmLimit: null,
  maxBudget: 100,
  budgetDuration: "30d",
  budgetResetAt: Date.now() + 86_400_000,
  spend: 0,
});

/** A caller's metric labels and its budget subjects (its key and its user). */
export interface BenchCaller {
  caller: { hashed_api_key: string; api_key_alias: string; user: string; team: string; team_alias: string };
  subjects: LimitSubject[];
}

/** `keys` callers, key k belonging to user `user-<k mod users>`. */
export function benchCallers(keys: number, users: number): BenchCaller[] {
  return Array.from({ length: keys }, (_, k) => {
    const hash = k.toString(16).padStart(64, "0");
    const user = `user-${k % users}`;
    return {
      caller: { hashed_api_key: hash, api_key_alias: `key-${k}`, user, team: "", team_alias: "" },
      subjects: [subject("key", hash), subject("user", user)],
    };
  });
}

const headers = { "x-ratelimit-remaining-requests": "4999", "x-ratelimit-remaining-tokens": "1999000" };

/**
 * Records one finished chat call of `who` (12 + 5 tokens, $0.00001, a 200) into `metrics` through `record`;
 * `n` varies its latencies (ms) from call to call.
 */
export function recordOneCall(record: RecordCall, metrics: AnyMetrics, who: BenchCaller, n: number): void {
  record.recordCallMetrics(metrics, {
    caller: who.caller,
    subjects: who.subjects,
    requestedModel: "general",
    deployment,
    promptTokens: 12,
    completionTokens: 5,
    totalTokens: 17,
    cost: 0.000_01,
    totalMs: 20 + (n % 997),
    upstreamMs: 19 + (n % 991),
    upstreamHeaders: headers,
    nowEpochMs: Date.now(),
  });
  record.recordRequest(metrics, who.caller, "/v1/chat/completions", "general", 200, undefined);
}
