/**
 * Guardrail metrics under LiteLLM's names (docs/my-website/docs/proxy/prometheus.md in BerriAI/litellm), on the
 * gateway's registry. Label values are bounded: `guardrail_name` comes from the policy, `hook_type` is pre_call or
 * post_call, and `status` is the decision: allow | mask | block | error, or monitor_mask | monitor_block for what
 * a monitor-mode guardrail would have done.
 */
import { Counter, Histogram, type Registry } from "prom-client";
import { CounterBatch, type PendingSeries, seriesKey } from "../metrics/counter-batch.js";
import { HistogramBatch, type PendingObservations } from "../metrics/histogram-batch.js";
import type { GuardDecision } from "./types.js";

/** The three guardrail metrics and how a decision is counted in them. */
export interface GuardrailMetrics {
  /** Decisions (labels: guardrail_name, status, hook_type). */
  requests: Counter<"guardrail_name" | "status" | "hook_type">;
  /** Decisions whose guardrail service failed (label: guardrail_name). */
  errors: Counter<"guardrail_name">;
  /** Time a guardrail took, seconds (labels: guardrail_name, hook_type). */
  latency: Histogram<"guardrail_name" | "hook_type">;
  /** Counts one decision in all three. */
  record(decision: GuardDecision): void;
}

/** The `status` label of a decision. */
export function decisionStatus(d: GuardDecision): string {
  return d.mode === "monitor" && (d.action === "mask" || d.action === "block")
    ? `monitor_${d.action}`
    : d.action;
}

/** Registers the guardrail metrics on `registry` (call once per registry). */
export function createGuardrailMetrics(registry: Registry): GuardrailMetrics {
  const registers = [registry];
  // Counts and latencies are kept per label set and folded in when the registry is read (metrics/counter-batch.ts,
  // metrics/histogram-batch.ts).
  const batch = new CounterBatch();
  const observations = new HistogramBatch();
  const collect = () => {
    batch.flush();
    observations.flush();
  };
  const requests = new Counter({
    name: "litellm_guardrail_requests_total",
    help: "Guardrail decisions, by guardrail, status (allow, mask, block, error, monitor_mask, monitor_block) and hook",
    labelNames: ["guardrail_name", "status", "hook_type"] as const,
    registers,
    collect,
  });
  const errors = new Counter({
    name: "litellm_guardrail_errors_total",
    help: "Guardrail calls whose service failed (unreachable, timeout, bad answer)",
    labelNames: ["guardrail_name"] as const,
    registers,
    collect,
  });
  const latency = new Histogram({
    name: "litellm_guardrail_latency_seconds",
    help: "Time a guardrail took, seconds",
    labelNames: ["guardrail_name", "hook_type"] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
    collect,
  });
  /** Per (guardrail, status, hook): the counter and latency series, made once. */
  const series = new Map<
    string,
    { requests: PendingSeries; errors: PendingSeries; latency: PendingObservations }
  >();
  return {
    requests,
    errors,
    latency,
    record(d) {
      const status = decisionStatus(d);
      const key = seriesKey([d.guardrail, status, d.hook]);
      let found = series.get(key);
      if (found === undefined) {
        found = {
          requests: batch.series(requests, { guardrail_name: d.guardrail, status, hook_type: d.hook }),
          errors: batch.series(errors, { guardrail_name: d.guardrail }),
          latency: observations.series(latency, { guardrail_name: d.guardrail, hook_type: d.hook }),
        };
        series.set(key, found);
      }
      batch.add(found.requests, 1);
      if (d.action === "error") batch.add(found.errors, 1);
      observations.observe(found.latency, d.latencyMs / 1000);
    },
  };
}
