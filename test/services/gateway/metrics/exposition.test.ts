/**
 * The gateway's own /metrics exposition (every `litellm_*` and `gateway_*` family: the call, request, budget,
 * limit and guardrail metrics) after a fixed sequence of calls, read twice (mid-way and at the end, as two
 * scrapes), as text, and at the end as the JSON the cluster's primary aggregates. Recorded in
 * `exposition.txt.snap` and `exposition.json.snap` from the code before the metrics moved to one mechanism
 * (compact counters, gauges and histograms written by slot, no batches); the move changed only the
 * `litellm_remaining_requests_metric`/`_tokens_metric` lines of one key whose calls carried two team aliases,
 * where the gauge batch had shown an older call's value (record-call.test.ts). Process metrics (`process_*`,
 * `nodejs_*`) vary run to run and are left out.
 */
import { describe, expect, it } from "vitest";
import type { Deployment, ProviderName } from "../../../../services/gateway/src/config/types.js";
import { createGuardrailMetrics } from "../../../../services/gateway/src/guardrails/metrics.js";
import type { GuardDecision } from "../../../../services/gateway/src/guardrails/types.js";
import type { LimitSubject } from "../../../../services/gateway/src/limits/types.js";
import { type CallerLabels, createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import {
  type CallMetricFacts,
  recordCallMetrics,
  recordRequest,
  recordTimeToFirstToken,
} from "../../../../services/gateway/src/metrics/record-call.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

function deployment(
  id: string,
  provider: ProviderName,
  upstreamModel: string,
  modelName: string,
): Deployment {
  return {
    id,
    modelName,
    provider,
    upstreamModel,
    apiBase: "http://upstream.local/v1",
    tags: [],
    created: 0,
  };
}
const DEPLOYMENTS = [
  deployment("dep-1", "openai", "gpt-x", "general"),
  deployment("dep-2", "anthropic", "claude-y", "general"),
  deployment("dep-3", "openai", "gpt-mini", "small"),
];

function subject(scope: LimitSubject["scope"], id: string, extra: Partial<LimitSubject> = {}): LimitSubject {
  const base = { rpmLimit: null, tpmLimit: null, budgetDuration: null, budgetResetAt: null };
  return { scope, id, maxBudget: null, spend: 0, ...base, ...extra };
}

/** Five callers: keys with and without a user, a team key (its team's alias renamed later), the master key. */
const CALLERS: { caller: CallerLabels; subjects: (i: number) => LimitSubject[] }[] = [
  {
    caller: { hashed_api_key: "a1".repeat(32), api_key_alias: "ci", user: "alice", team: "", team_alias: "" },
    subjects: (i) => [
      subject("key", "a1".repeat(32), { maxBudget: 10, spend: i * 0.01, budgetResetAt: NOW + 36e5 * 5 }),
      subject("user", "alice", { maxBudget: 50, spend: i * 0.02 }),
    ],
  },
  {
    caller: { hashed_api_key: "b2".repeat(32), api_key_alias: "", user: "bob", team: "", team_alias: "" },
    subjects: () => [subject("key", "b2".repeat(32)), subject("user", "bob", { budgetResetAt: NOW + 1 })],
  },
  {
    caller: {
      hashed_api_key: "c3".repeat(32),
      api_key_alias: "svc",
      user: "",
      team: "t-1",
      team_alias: "Search",
    },
    subjects: (i) => [
      subject("key", "c3".repeat(32), { maxBudget: 1, spend: 0.5 + i * 0.1 }),
      subject("team", "t-1", { alias: "Search", maxBudget: 100, spend: i, budgetResetAt: NOW + 36e5 * 30 }),
      subject("team_member", "t-1:carol", { maxBudget: 5 }),
    ],
  },
  {
    caller: {
      hashed_api_key: "c3".repeat(32),
      api_key_alias: "svc",
      user: "",
      team: "t-1",
      team_alias: "Find",
    },
    subjects: () => [
      subject("key", "c3".repeat(32)),
      subject("team", "t-1", { alias: "Find", maxBudget: 100 }),
    ],
  },
  {
    caller: { hashed_api_key: "master_key", api_key_alias: "", user: "", team: "", team_alias: "" },
    subjects: () => [],
  },
];

const DECISIONS: Omit<GuardDecision, "latencyMs">[] = [
  { guardrail: "pii", hook: "pre_call", action: "allow", mode: "enforce" },
  { guardrail: "pii", hook: "pre_call", action: "mask", mode: "enforce" },
  { guardrail: "pii", hook: "post_call", action: "block", mode: "monitor" },
  { guardrail: "prompt_injection", hook: "pre_call", action: "error", mode: "enforce" },
  { guardrail: "prompt_injection", hook: "pre_call", action: "block", mode: "enforce" },
  { guardrail: "lakera", hook: "post_call", action: "mask", mode: "monitor" },
];

/** Call `i` of the sequence, into every recording function. */
function call(
  m: ReturnType<typeof createMetrics>,
  guard: ReturnType<typeof createGuardrailMetrics>,
  i: number,
) {
  const { caller, subjects } = CALLERS[i % CALLERS.length] as (typeof CALLERS)[number];
  const d = DEPLOYMENTS[(i * 7) % DEPLOYMENTS.length] as Deployment;
  const facts: CallMetricFacts = {
    caller,
    subjects: subjects(i),
    requestedModel: d.modelName,
    deployment: d,
    promptTokens: 10 + i,
    completionTokens: 3 * i,
    totalTokens: 10 + 4 * i,
    cost: 0.001 * (i % 13) + 1e-7,
    totalMs: 40 + ((i * 37) % 900),
    upstreamMs: 30 + ((i * 37) % 880),
    nowEpochMs: NOW + i * 1000,
    ...(i % 3 === 0
      ? {
          breakdown: {
            input: 10 + i - (i % 2) - (i % 5),
            output: 3 * i - i,
            accepted_prediction: 0,
            rejected_prediction: 0,
            web_search_requests: 0,
            cache_read: i % 2,
            cache_write_5m: i % 5,
            cache_write_1h: 0,
            input_audio: i % 7 === 0 ? 4 : 0,
            output_reasoning: i,
            output_audio: 0,
          },
        }
      : {}),
    ...(i % 4 !== 3
      ? {
          upstreamHeaders: {
            "x-ratelimit-remaining-requests": String(1000 - i),
            "x-ratelimit-remaining-tokens": `${i * 100}`,
          },
        }
      : {}),
  };
  const status = i % 11 === 5 ? 429 : i % 17 === 8 ? 500 : 200;
  recordRequest(
    m,
    caller,
    i % 2 ? "/v1/chat/completions" : "/v1/responses",
    d.modelName,
    status,
    i % 17 === 8 ? undefined : status === 429 ? "RateLimitError" : undefined,
  );
  if (status === 200) recordCallMetrics(m, facts);
  if (i % 4 === 1) recordTimeToFirstToken(m, d.modelName, d, ((i * 13) % 300) / 1000);
  const decision = DECISIONS[i % DECISIONS.length] as (typeof DECISIONS)[number];
  guard.record({ ...decision, latencyMs: ((i * 3) % 40) / 7 });
}

/** The gateway's own families of the registry's text and JSON (not the process metrics). */
async function read(m: ReturnType<typeof createMetrics>): Promise<{ text: string; json: string }> {
  const ours = (name: string) => name.startsWith("litellm_") || name.startsWith("gateway_");
  const text = (await m.registry.metrics())
    .split("\n\n")
    .filter((family) => ours(family.slice("# HELP ".length)))
    .join("\n\n");
  const json = (await m.registry.getMetricsAsJSON()).filter((metric) => ours(metric.name));
  return { text, json: json.map((metric) => JSON.stringify(metric)).join("\n") };
}

describe("the gateway's /metrics exposition", () => {
  it("reads as recorded for a fixed sequence of calls, requests, streams and guardrail decisions", async () => {
    const m = createMetrics();
    const guard = createGuardrailMetrics(m.registry);
    for (let i = 0; i < 60; i++) call(m, guard, i);
    const first = await read(m);
    for (let i = 60; i < 200; i++) call(m, guard, i);
    const second = await read(m);
    await expect(`${first.text}\n\n==== second scrape ====\n\n${second.text}\n`).toMatchFileSnapshot(
      "exposition.txt.snap",
    );
    await expect(`${second.json}\n`).toMatchFileSnapshot("exposition.json.snap");
  });
});
