/**
 * Guardrail metrics under LiteLLM's names (docs/my-website/docs/proxy/prometheus.md in BerriAI/litellm), on the
 * gateway's registry. Label values are bounded: `guardrail_name` comes from the policy, `hook_type` is pre_call or
 * post_call, and `status` is the decision: allow | mask | block | error, or monitor_mask | monitor_block for what
 * a monitor-mode guardrail would have done.
 */
import type { Registry } from "prom-client";
import { CompactCounter } from "../metrics/compact-counter.js";
import { CompactHistogram } from "../metrics/compact-histogram.js";
import { seriesKey } from "../metrics/series-store.js";
import type { GuardDecision } from "./types.js";

/** The three guardrail metrics and how a decision is counted in them. */
export interface GuardrailMetrics {
  /** Decisions (labels: guardrail_name, status, hook_type). */
  requests: CompactCounter<"guardrail_name" | "status" | "hook_type">;
  /** Decisions whose guardrail service failed (label: guardrail_name). */
  errors: CompactCounter<"guardrail_name">;
  /** Time a guardrail took, seconds (labels: guardrail_name, hook_type). */
  latency: CompactHistogram<"guardrail_name" | "hook_type">;
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
  // Series kept compactly and written by slot (metrics/compact-counter.ts, metrics/compact-histogram.ts).
  const requests = new CompactCounter({
    name: "litellm_guardrail_requests_total",
    help: "Guardrail decisions, by guardrail, status (allow, mask, block, error, monitor_mask, monitor_block) and hook",
    labelNames: ["guardrail_name", "status", "hook_type"] as const,
    registers,
  });
  const errors = new CompactCounter({
    name: "litellm_guardrail_errors_total",
    help: "Guardrail calls whose service failed (unreachable, timeout, bad answer)",
    labelNames: ["guardrail_name"] as const,
    registers,
  });
  const latency = new CompactHistogram({
    name: "litellm_guardrail_latency_seconds",
    help: "Time a guardrail took, seconds",
    labelNames: ["guardrail_name", "hook_type"] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  /** Per (guardrail, status, hook): the slots of its counter and latency series, made once. */
  const series = new Map<string, { requests: number; errors: number; latency: number }>();
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
          requests: requests.series({ guardrail_name: d.guardrail, status, hook_type: d.hook }),
          errors: errors.series({ guardrail_name: d.guardrail }),
          latency: latency.series({ guardrail_name: d.guardrail, hook_type: d.hook }),
        };
        series.set(key, found);
      }
      requests.add(found.requests, 1);
      if (d.action === "error") errors.add(found.errors, 1);
      latency.observeSeries(found.latency, d.latencyMs / 1000);
    },
  };
}
