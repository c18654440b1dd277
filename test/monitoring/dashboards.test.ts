/**
 * The Grafana side of monitoring/: the provisioned datasource, and dashboards Grafana can load (unique ids,
 * panels on the provisioned datasource, a layout without overlaps) that show what the platform's operators
 * need. Whether their PromQL evaluates is checked against a real Prometheus in prometheus-live.test.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type Dashboard, dashboards, MONITORING_DIR, type Panel } from "./harness.js";

const datasource = (
  parseYaml(
    readFileSync(path.join(MONITORING_DIR, "grafana/provisioning/datasources/prometheus.yml"), "utf8"),
  ) as {
    datasources: { uid: string; type: string; url: string; isDefault: boolean }[];
  }
).datasources;

const all = dashboards();
const byTitle = (title: string): Dashboard => {
  const d = all.find((x) => x.title === title);
  if (!d) throw new Error(`no dashboard titled ${title}; have ${all.map((x) => x.title).join(", ")}`);
  return d;
};
const dataPanels = (d: Dashboard): Panel[] => d.panels.filter((p) => p.type !== "row");
const exprs = (d: Dashboard): string[] => dataPanels(d).flatMap((p) => (p.targets ?? []).map((t) => t.expr));

describe("Grafana provisioning", () => {
  it("provisions one default Prometheus datasource with a fixed uid, pointing at the metrics container", () => {
    expect(datasource).toHaveLength(1);
    expect(datasource[0]).toMatchObject({ type: "prometheus", uid: "prometheus", isDefault: true });
    expect(datasource[0]?.url).toBe("http://metrics:9090");
  });
});

describe.each(all.map((d) => [d.title, d] as const))("dashboard %s", (_title, d) => {
  it("has a uid of Grafana's form, unique among the dashboards", () => {
    expect(d.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(all.filter((x) => x.uid === d.uid)).toHaveLength(1);
  });

  it("gives every panel a unique id and every data panel a title, a description and queries", () => {
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dataPanels(d)) {
      expect(p.title, `panel ${p.id}`).toBeTruthy();
      expect((p as Panel & { description?: string }).description, p.title).toBeTruthy();
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
    }
  });

  it("queries only the provisioned datasource", () => {
    for (const p of dataPanels(d)) {
      expect(p.datasource, p.title).toEqual({ type: "prometheus", uid: datasource[0]?.uid });
      for (const t of p.targets ?? []) {
        expect(t.datasource, p.title).toEqual(p.datasource);
        expect(t.expr.trim(), p.title).not.toBe("");
      }
    }
  });

  it("lays its panels out inside the 24-column grid without overlaps", () => {
    const boxes = d.panels.map((p) => ({ title: p.title, ...p.gridPos }));
    for (const b of boxes) {
      expect(b.x + b.w, b.title).toBeLessThanOrEqual(24);
      expect(b.w * b.h, b.title).toBeGreaterThan(0);
    }
    for (const [i, a] of boxes.entries()) {
      for (const b of boxes.slice(i + 1)) {
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `${a.title} overlaps ${b.title}`).toBe(false);
      }
    }
  });
});

describe("LiteLLM Overview", () => {
  const overview = exprs(byTitle("LiteLLM Overview")).join("\n");

  it.each([
    ["requests", /rate\(litellm_proxy_total_requests_metric_total\[/],
    ["failures by class", /by \(exception_class[^)]*\) \(rate\(litellm_proxy_failed_requests_metric_total\[/],
    [
      "latency quantiles",
      /histogram_quantile\(0\.99, sum by \(le\) \(rate\(litellm_request_total_latency_metric_bucket/,
    ],
    ["time to first token", /litellm_llm_api_time_to_first_token_metric_bucket/],
    ["input and output tokens", /litellm_input_tokens_metric_total[\s\S]*litellm_output_tokens_metric_total/],
    ["spend by key", /sum by \(api_key_alias, hashed_api_key\) \(increase\(litellm_spend_metric_total/],
    ["spend by model", /sum by \(model\) \(increase\(litellm_spend_metric_total/],
    ["spend by user", /sum by \(user\) \(increase\(litellm_spend_metric_total/],
    ["key budgets", /litellm_remaining_api_key_budget_metric \/ litellm_api_key_max_budget_metric/],
    ["user budgets", /litellm_remaining_user_budget_metric \/ litellm_user_max_budget_metric/],
    ["spend by team", /sum by \(team, team_alias\) \(increase\(litellm_spend_metric_total/],
    ["team budgets", /litellm_remaining_team_budget_metric \/ litellm_team_max_budget_metric/],
    ["requests by team", /sum by \(team, team_alias\) \(rate\(litellm_proxy_total_requests_metric_total/],
    ["guardrail decisions", /by \(guardrail_name, status\) \(rate\(litellm_guardrail_requests_total/],
  ])("shows %s", (_what, pattern) => {
    expect(overview).toMatch(pattern);
  });
});

describe("Platform", () => {
  const platform = exprs(byTitle("Platform")).join("\n");

  it.each([
    ["scrape health", /^up$/m],
    ["Postgres through its exporter", /\bpg_up\b/],
    ["Redis through its exporter", /\bredis_up\b/],
    ["firing alerts", /ALERTS\{alertstate="firing"\}/],
  ])("shows %s", (_what, pattern) => {
    expect(platform).toMatch(pattern);
  });
});
