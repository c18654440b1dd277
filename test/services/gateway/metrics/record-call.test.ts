/**
 * recordCallMetrics: one finished call's facts into LiteLLM-named series, read back from the registry's text
 * exposition (what Prometheus scrapes).
 */
import { describe, expect, it, vi } from "vitest";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { createMetrics, type GatewayMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import {
  type CallMetricFacts,
  recordCallMetrics,
  recordRequest,
  recordTimeToFirstToken,
} from "../../../../services/gateway/src/metrics/record-call.js";
import { keySubject, userSubject } from "../limits/subjects.js";

const deployment: Deployment = {
  id: "dep-1",
  modelName: "general",
  provider: "openai",
  upstreamModel: "gpt-x",
  apiBase: "http://upstream.local/v1",
  tags: [],
  created: 0,
};

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const KEY = "ab".repeat(32);

function facts(extra: Partial<CallMetricFacts> = {}): CallMetricFacts {
  return {
    caller: { hashed_api_key: KEY, api_key_alias: "ci", user: "alice", team: "", team_alias: "" },
    subjects: [],
    requestedModel: "general",
    deployment,
    promptTokens: 11,
    completionTokens: 7,
    totalTokens: 18,
    cost: 0.25,
    totalMs: 1500,
    upstreamMs: 1400,
    nowEpochMs: NOW,
    ...extra,
  };
}

/** The caller labels of KEY, a key of team t-1, when the team's alias is `team_alias`. */
function teamCaller(team_alias: string): CallMetricFacts["caller"] {
  return { hashed_api_key: KEY, api_key_alias: "ci", user: "", team: "t-1", team_alias };
}

/** The value of the one sample of `name` whose labels include `labels`, or undefined. */
async function sample(m: GatewayMetrics, name: string, labels: Record<string, string> = {}) {
  const text = await m.registry.metrics();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(" ") + 1).replace("Inf", "Infinity"));
    }
  }
  return undefined;
}

describe("recordCallMetrics", () => {
  it("counts tokens under LiteLLM's current names with requested_model, model and model_id", async () => {
    const m = createMetrics();
    recordCallMetrics(m, facts());
    recordCallMetrics(m, facts());
    const labels = {
      requested_model: "general",
      model: "openai/gpt-x",
      model_id: "dep-1",
      api_key_alias: "ci",
    };
    expect(await sample(m, "litellm_total_tokens_metric_total", labels)).toBe(36);
    expect(await sample(m, "litellm_input_tokens_metric_total", labels)).toBe(22);
    expect(await sample(m, "litellm_output_tokens_metric_total", labels)).toBe(14);
    expect(await sample(m, "litellm_spend_metric_total", { user: "alice", model: "openai/gpt-x" })).toBe(0.5);
    expect(await sample(m, "litellm_overhead_latency_metric_sum", { model_group: "general" })).toBeCloseTo(
      0.2,
    );
  });

  it("labels a team key's requests, failures, spend and tokens with LiteLLM's team and team_alias", async () => {
    const m = createMetrics();
    const caller = { hashed_api_key: KEY, api_key_alias: "ci", user: "", team: "t-1", team_alias: "Search" };
    recordCallMetrics(m, facts({ caller }));
    recordRequest(m, caller, "/v1/chat/completions", "general", 200, undefined);
    recordRequest(m, caller, "/v1/chat/completions", "general", 429, "rate_limit_error");
    const team = { team: "t-1", team_alias: "Search" };
    expect(await sample(m, "litellm_spend_metric_total", team)).toBe(0.25);
    expect(await sample(m, "litellm_total_tokens_metric_total", team)).toBe(18);
    expect(await sample(m, "litellm_input_tokens_metric_total", team)).toBe(11);
    expect(await sample(m, "litellm_output_tokens_metric_total", team)).toBe(7);
    expect(
      await sample(m, "litellm_proxy_total_requests_metric_total", { ...team, status_code: "200" }),
    ).toBe(1);
    expect(await sample(m, "litellm_proxy_failed_requests_metric_total", team)).toBe(1);
    // A call without a team is its own series, labelled with empty team and team_alias.
    recordCallMetrics(m, facts());
    expect(await sample(m, "litellm_spend_metric_total", { team: "", team_alias: "" })).toBe(0.25);
    expect(await sample(m, "litellm_spend_metric_total", team)).toBe(0.25);
  });

  it("starts new series when a team's alias changes under the same key", async () => {
    const m = createMetrics();
    recordCallMetrics(m, facts({ caller: teamCaller("Search") }));
    recordRequest(m, teamCaller("Search"), "/v1/chat/completions", "general", 200, undefined);
    recordCallMetrics(m, facts({ caller: teamCaller("Find") }));
    recordRequest(m, teamCaller("Find"), "/v1/chat/completions", "general", 200, undefined);
    recordCallMetrics(m, facts({ caller: teamCaller("") }));
    for (const alias of ["Search", "Find", ""]) {
      expect(await sample(m, "litellm_spend_metric_total", { team: "t-1", team_alias: alias })).toBe(0.25);
    }
    expect(await sample(m, "litellm_proxy_total_requests_metric_total", { team_alias: "Find" })).toBe(1);
  });

  it("counts the usage breakdown under LiteLLM's token-detail names, sparse (no series for a part never reported)", async () => {
    const m = createMetrics();
    const breakdown = {
      input: 100,
      input_audio: 0,
      cache_read: 800,
      cache_write_5m: 50,
      cache_write_1h: 30,
      output: 40,
      output_reasoning: 25,
      output_audio: 0,
      accepted_prediction: 0,
      rejected_prediction: 0,
      web_search_requests: 0,
    };
    recordCallMetrics(m, facts({ promptTokens: 980, completionTokens: 40, totalTokens: 1020, breakdown }));
    recordCallMetrics(m, facts({ promptTokens: 980, completionTokens: 40, totalTokens: 1020, breakdown }));
    recordCallMetrics(m, facts()); // an estimate without a breakdown adds nothing to the details
    const labels = { requested_model: "general", model: "openai/gpt-x", model_id: "dep-1", user: "alice" };
    expect(await sample(m, "litellm_input_cached_tokens_metric_total", labels)).toBe(1600);
    expect(await sample(m, "litellm_input_cache_creation_tokens_metric_total", labels)).toBe(160);
    expect(await sample(m, "litellm_output_reasoning_tokens_metric_total", labels)).toBe(50);
    expect(await sample(m, "litellm_input_tokens_metric_total", labels)).toBe(980 * 2 + 11);
    expect(await sample(m, "litellm_input_audio_tokens_metric_total")).toBeUndefined();
    expect(await sample(m, "litellm_output_audio_tokens_metric_total")).toBeUndefined();
  });

  it("reports key and user budgets as max, remaining (spend read with the key + this call) and hours to reset", async () => {
    const m = createMetrics();
    const key = keySubject({ id: KEY, maxBudget: 10, spend: 8.5, budgetResetAt: NOW + 36 * 3_600_000 });
    const user = userSubject({ id: "alice", maxBudget: 20, spend: 19 });
    recordCallMetrics(m, facts({ subjects: [key, user] }));
    const keyLabels = { hashed_api_key: KEY, api_key_alias: "ci" };
    expect(await sample(m, "litellm_api_key_max_budget_metric", keyLabels)).toBe(10);
    expect(await sample(m, "litellm_remaining_api_key_budget_metric", keyLabels)).toBeCloseTo(1.25);
    expect(await sample(m, "litellm_api_key_budget_remaining_hours_metric", keyLabels)).toBe(36);
    expect(await sample(m, "litellm_user_max_budget_metric", { user: "alice" })).toBe(20);
    expect(await sample(m, "litellm_remaining_user_budget_metric", { user: "alice" })).toBeCloseTo(0.75);
    // A lifetime budget has no reset countdown.
    expect(await sample(m, "litellm_user_budget_remaining_hours_metric", { user: "alice" })).toBeUndefined();
  });

  it("reports a team key's team budget under LiteLLM's team gauges, and no series for the member's budget", async () => {
    const m = createMetrics();
    const key = keySubject({ id: KEY });
    const team = keySubject({
      scope: "team",
      id: "search-team",
      alias: "Search",
      maxBudget: 50,
      spend: 10,
      budgetResetAt: NOW + 12 * 3_600_000,
    });
    const member = keySubject({
      scope: "team_member",
      id: '["search-team","alice"]',
      maxBudget: 5,
      spend: 1,
    });
    recordCallMetrics(m, facts({ subjects: [key, team, member] }));
    const teamLabels = { team: "search-team", team_alias: "Search" };
    expect(await sample(m, "litellm_team_max_budget_metric", teamLabels)).toBe(50);
    expect(await sample(m, "litellm_remaining_team_budget_metric", teamLabels)).toBeCloseTo(50 - 10 - 0.25);
    expect(await sample(m, "litellm_team_budget_remaining_hours_metric", teamLabels)).toBe(12);
    // Neither the member's budget nor the team shows up under the user or key gauges.
    expect(await sample(m, "litellm_user_max_budget_metric")).toBeUndefined();
    expect(
      await sample(m, "litellm_api_key_max_budget_metric", { hashed_api_key: "search-team" }),
    ).toBeUndefined();
  });

  it("reports +Inf for a subject without a budget, as LiteLLM does", async () => {
    const m = createMetrics();
    recordCallMetrics(m, facts({ subjects: [keySubject({ id: KEY })] }));
    expect(await sample(m, "litellm_api_key_max_budget_metric", { hashed_api_key: KEY })).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(await sample(m, "litellm_remaining_api_key_budget_metric", { hashed_api_key: KEY })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it("sets no budget series for the master key", async () => {
    const m = createMetrics();
    recordCallMetrics(
      m,
      facts({
        caller: { hashed_api_key: "master_key", api_key_alias: "", user: "", team: "", team_alias: "" },
      }),
    );
    const text = await m.registry.metrics();
    expect(text).not.toMatch(
      /^litellm_(remaining_api_key_budget|api_key_max_budget|user_max_budget)_metric\{/m,
    );
  });

  it("takes the upstream's x-ratelimit-remaining-* headers and ignores values that are not numbers", async () => {
    const m = createMetrics();
    recordCallMetrics(
      m,
      facts({
        upstreamHeaders: {
          "x-ratelimit-remaining-requests": "499",
          "x-ratelimit-remaining-tokens": "149000",
        },
      }),
    );
    const labels = {
      model_group: "general",
      api_provider: "openai",
      litellm_model_name: "gpt-x",
      model_id: "dep-1",
    };
    expect(await sample(m, "litellm_remaining_requests_metric", labels)).toBe(499);
    expect(await sample(m, "litellm_remaining_tokens_metric", labels)).toBe(149000);

    recordCallMetrics(m, facts({ upstreamHeaders: { "x-ratelimit-remaining-requests": "lots" } }));
    expect(await sample(m, "litellm_remaining_requests_metric", labels)).toBe(499);
  });

  it("creates the deployment's state series at 0 without lowering a state the router raised", async () => {
    const m = createMetrics();
    const labels = {
      litellm_model_name: "gpt-x",
      model_id: "dep-1",
      api_provider: "openai",
    };
    recordCallMetrics(m, facts());
    expect(await sample(m, "litellm_deployment_state", { model_id: "dep-1" })).toBe(0);
    m.deploymentState.set(labels, 2);
    recordCallMetrics(m, facts());
    expect(await sample(m, "litellm_deployment_state", { model_id: "dep-1" })).toBe(2);
  });

  it("writes histograms and gauges by slot, never through prom-client's per-call observe or set", async () => {
    const m = createMetrics();
    const key = keySubject({ id: KEY, maxBudget: 10, budgetResetAt: NOW + 3_600_000 });
    const observe = vi.spyOn(m.totalLatency, "observe");
    const set = vi.spyOn(m.remainingApiKeyBudget, "set");
    const headers = { "x-ratelimit-remaining-requests": "5" };
    for (let i = 0; i < 50; i++) {
      recordCallMetrics(m, facts({ subjects: [key], totalMs: 100 + i, upstreamHeaders: headers }));
    }
    expect(await sample(m, "litellm_request_total_latency_metric_count")).toBe(50);
    // The last call's remaining budget: 10 − 0.25.
    expect(await sample(m, "litellm_remaining_api_key_budget_metric", { hashed_api_key: KEY })).toBe(9.75);
    expect(observe.mock.calls.length + set.mock.calls.length).toBe(0);
  });

  it("shows the last call's remaining limits when calls of one key alternate between two team aliases", async () => {
    const m = createMetrics();
    const call = (alias: string, remaining: number) =>
      recordCallMetrics(
        m,
        facts({
          caller: teamCaller(alias),
          upstreamHeaders: { "x-ratelimit-remaining-requests": String(remaining) },
        }),
      );
    call("Search", 90); // the team is renamed while calls are in flight: both aliases' calls finish
    call("Find", 80);
    call("Search", 70);
    const remaining = () => sample(m, "litellm_remaining_requests_metric", { hashed_api_key: KEY });
    expect(await remaining()).toBe(70);
    call("Find", 60);
    expect(await remaining()).toBe(60);
    call("Search", 50);
    expect(await remaining()).toBe(50);
  });

  it("observes a stream's time to first token under requested_model and provider/model", async () => {
    const m = createMetrics();
    recordTimeToFirstToken(m, "general", deployment, 0.25);
    recordTimeToFirstToken(m, "general", deployment, 0.5);
    const labels = { requested_model: "general", model: "openai/gpt-x" };
    expect(await sample(m, "litellm_llm_api_time_to_first_token_metric_count", labels)).toBe(2);
    expect(await sample(m, "litellm_llm_api_time_to_first_token_metric_sum", labels)).toBe(0.75);
    expect(() => recordTimeToFirstToken(m, "general", deployment, Number.NaN)).toThrow(TypeError);
  });

  it("follows a caller's subjects when they change from call to call", async () => {
    const m = createMetrics();
    const other = keySubject({ id: "cd".repeat(32), alias: "team", maxBudget: 5, spend: 1 });
    recordCallMetrics(m, facts({ subjects: [other, userSubject({ id: "alice", maxBudget: 3 })] }));
    recordCallMetrics(m, facts({ subjects: [{ ...other, alias: "renamed" }, userSubject({ id: "bob" })] }));
    const remaining = (labels: Record<string, string>) =>
      sample(m, "litellm_remaining_api_key_budget_metric", labels);
    expect(await remaining({ api_key_alias: "team" })).toBe(3.75);
    expect(await remaining({ api_key_alias: "renamed" })).toBe(3.75);
    expect(await sample(m, "litellm_user_max_budget_metric", { user: "alice" })).toBe(3);
    expect(await sample(m, "litellm_user_max_budget_metric", { user: "bob" })).toBe(Number.POSITIVE_INFINITY);
  });
});
