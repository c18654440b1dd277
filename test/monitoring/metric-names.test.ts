/**
 * Every metric the dashboards and alert rules of monitoring/ read exists in the gateway's /metrics after one
 * call, unless it belongs to another service (listed below with its owner). Catches a renamed or misspelt
 * metric, which Prometheus would silently answer with an empty result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expressions, metricNames } from "./harness.js";
import { type MonitoredGateway, startMonitoredGateway } from "./monitored-gateway.js";

/** Metrics read by monitoring/ (as PromQL reads them) that the gateway does not expose, and who does. */
const OTHER_OWNERS: Record<string, string> = {
  up: "prometheus (per scrape target)",
  scrape_duration_seconds: "prometheus (per scrape target)",
  ALERTS: "prometheus (alert state)",
  prometheus_tsdb_head_series: "prometheus",
  alertmanager_notifications_failed_total: "alertmanager",
  pg_up: "relational-db-exporter (postgres_exporter)",
  pg_stat_database_numbackends: "relational-db-exporter (postgres_exporter)",
  pg_stat_database_xact_commit: "relational-db-exporter (postgres_exporter)",
  pg_stat_database_xact_rollback: "relational-db-exporter (postgres_exporter)",
  pg_database_size_bytes: "relational-db-exporter (postgres_exporter)",
  redis_up: "cache-exporter (redis_exporter)",
  redis_memory_used_bytes: "cache-exporter (redis_exporter)",
  redis_connected_clients: "cache-exporter (redis_exporter)",
  redis_commands_processed_total: "cache-exporter (redis_exporter)",
};

describe("metricNames", () => {
  it("reads metric names, not functions, labels, grouping, strings or Grafana variables", () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, requested_model) (rate(litellm_request_total_latency_metric_bucket{job="gateway"}[$__rate_interval]))) > 60',
      ),
    ).toEqual(["litellm_request_total_latency_metric_bucket"]);
    expect(
      metricNames(
        'label_replace(sum by (user) (increase(litellm_spend_metric_total[1h])), "user", "(none)", "user", "") or up == bool 0 unless ALERTS < +Inf',
      ),
    ).toEqual(["ALERTS", "litellm_spend_metric_total", "up"]);
    expect(metricNames("1 - a_metric / on (x) group_left (y) b_metric")).toEqual(["a_metric", "b_metric"]);
  });
});

/** Metric families of a /metrics text: name → type (from the `# TYPE` lines). */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

/** Whether `name` (a sample name as PromQL reads it) is exposed by a family of `fams`. */
function exposes(fams: Map<string, string>, name: string): boolean {
  if (fams.has(name)) return true;
  const histogram = name.match(/^(.+)_(bucket|sum|count)$/);
  return histogram !== null && ["histogram", "summary"].includes(fams.get(histogram[1]!) ?? "");
}

describe("the metrics monitoring/ reads", () => {
  let gw: MonitoredGateway;
  let text: string;
  let fams: Map<string, string>;

  beforeAll(async () => {
    gw = await startMonitoredGateway("metric-names");
    await gw.traffic(1);
    text = await (await fetch(`${gw.gateway.url}/metrics`)).text();
    fams = families(text);
  }, 30_000);
  afterAll(async () => {
    await gw?.close();
  });

  const referenced = [...new Set(expressions().flatMap((e) => metricNames(e.expr)))].sort();

  it("are all exposed by the gateway after one call, or owned by a listed service", () => {
    const unknown = referenced.filter((name) => !exposes(fams, name) && !(name in OTHER_OWNERS));
    expect(unknown).toEqual([]);
  });

  it("include the request, token, spend and budget series with samples after one call", () => {
    for (const name of [
      "litellm_proxy_total_requests_metric_total",
      "litellm_total_tokens_metric_total",
      "litellm_input_tokens_metric_total",
      "litellm_output_tokens_metric_total",
      "litellm_spend_metric_total",
      "litellm_remaining_api_key_budget_metric",
      "litellm_api_key_max_budget_metric",
      "litellm_remaining_user_budget_metric",
      "litellm_user_max_budget_metric",
      "litellm_deployment_state",
      "gateway_limits_shared",
      "gateway_trace_exported_spans_total",
    ]) {
      expect(text, name).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? \\S+$`, "m"));
    }
  });

  it("list no other-service metric that monitoring/ no longer reads or that the gateway now exposes", () => {
    for (const name of Object.keys(OTHER_OWNERS)) {
      expect(referenced, `${name} is listed but not read`).toContain(name);
      expect(exposes(fams, name), `${name} is exposed by the gateway: remove it from OTHER_OWNERS`).toBe(
        false,
      );
    }
  });
});
