/**
 * A real Prometheus scraping a real gateway (Postgres, Redis, the fake OpenAI upstream) every second, with the
 * rules of monitoring/rules/ (their `for:` shortened to 1 s in the test's copy). After some traffic: every
 * PromQL expression of every dashboard panel and rule evaluates without error, the traffic, token, spend,
 * latency and budget panels return data, an edited rule file is picked up by `POST /-/reload`, and GatewayDown
 * fires once the gateway stops.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PrometheusProcess, startPrometheus, writeScrapeConfig } from "../helpers/prometheus.js";
import { waitFor } from "../helpers/redis.js";
import {
  dashboards,
  expressions,
  prometheusToolsMissing,
  RULES_DIR,
  withGrafanaVariables,
} from "./harness.js";
import { type MonitoredGateway, startMonitoredGateway } from "./monitored-gateway.js";

const skip = prometheusToolsMissing();
const CALLS = 6;

/** Polls `check` every 250 ms until it returns true; fails with `what` after 20 s. */
const until = (what: string, check: () => Promise<boolean>) => waitFor(what, check, 20_000, 250);

describe.skipIf(skip !== undefined)(`a real Prometheus scraping a real gateway ${skip ?? ""}`, () => {
  let gw: MonitoredGateway;
  let prom: PrometheusProcess;
  let dir: string;

  /** The requests of the key `traffic` uses for all but its one team call each time. */
  const MINE = 'litellm_proxy_total_requests_metric_total{api_key_alias="monitoring-test"}';
  const total = async (expr: string) =>
    (await prom.query(expr)).data.result.reduce((sum, s) => sum + Number(s.value[1]), 0);

  beforeAll(async () => {
    gw = await startMonitoredGateway("prometheus-live");
    dir = mkdtempSync(path.join(tmpdir(), "prometheus-live-"));
    mkdirSync(path.join(dir, "rules"));
    for (const file of readdirSync(RULES_DIR).filter((f) => f.endsWith(".yml"))) {
      const text = readFileSync(path.join(RULES_DIR, file), "utf8");
      writeFileSync(
        path.join(dir, "rules", file),
        text.replace(/^(\s*for:\s*)\S+$/gm, (_m, key) => `${key}1s`),
      );
    }
    const config = writeScrapeConfig(dir, { gateway: gw.target }, ["rule_files: [rules/*.yml]"]);
    prom = await startPrometheus(config, dir);

    // A plain and a streamed call so the series exist, then the rest once Prometheus has seen them: rates
    // see an increase.
    await gw.traffic(2);
    await until("the first calls to be scraped", async () => (await total(MINE)) >= 2);
    await gw.traffic(CALLS - 2);
    await until("all calls to be scraped", async () => (await total(MINE)) >= CALLS);
  }, 60_000);

  afterAll(async () => {
    await prom?.stop();
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("evaluates every dashboard and rule expression without error", async () => {
    const all = expressions();
    expect(all.length).toBeGreaterThan(40);
    const failures: string[] = [];
    for (const e of all) {
      const answer = await prom.query(withGrafanaVariables(e.expr));
      if (answer.status !== "success") failures.push(`${e.source}: ${answer.errorType} ${answer.error}`);
    }
    expect(failures).toEqual([]);
  });

  it("returns data for the traffic, token, spend, latency and budget panels", async () => {
    const overview = dashboards().find((d) => d.title === "LiteLLM Overview");
    const panels = (overview?.panels ?? []).filter((p) =>
      /^(Requests per second|Tokens|Total tokens|Spend|Request latency|Time to first token|Gateway overhead|Key budget|User budget|Remaining key budget|Team budget|Remaining team budget)/.test(
        p.title,
      ),
    );
    expect(panels.length).toBeGreaterThanOrEqual(12);
    const empty: string[] = [];
    for (const p of panels) {
      for (const t of p.targets ?? []) {
        const result = (await prom.query(withGrafanaVariables(t.expr))).data.result;
        if (!result.some((s) => Number(s.value[1]) > 0)) empty.push(`${p.title} [${t.refId}]`);
      }
    }
    expect(empty).toEqual([]);
  });

  it("counts the calls on the key and user that made them, with their cost", async () => {
    expect(await total('litellm_proxy_total_requests_metric_total{api_key_alias="monitoring-test"}')).toBe(
      CALLS,
    );
    expect(await total('litellm_spend_metric_total{user="alice"}')).toBeGreaterThan(0);
    const used = await total(
      '1 - litellm_remaining_api_key_budget_metric{api_key_alias="monitoring-test"} / litellm_api_key_max_budget_metric',
    );
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThan(0.9);
  });

  it("picks up an edited rule file on POST /-/reload", async () => {
    expect(await prom.ruleNames()).not.toContain("ReloadCheck");
    appendFileSync(
      path.join(dir, "rules", "gateway.yml"),
      "  - name: reload-check\n    rules:\n      - alert: ReloadCheck\n        expr: vector(1)\n",
    );
    expect(await prom.reload()).toBe(200);
    await until("the edited rule to be loaded", async () => (await prom.ruleNames()).includes("ReloadCheck"));
    // The rules that were there stay loaded.
    expect(await prom.ruleNames()).toContain("GatewayDown");
  });

  it("fires GatewayDown once the gateway stops", async () => {
    const firing = async () =>
      (await prom.alerts()).some((a) => a.labels.alertname === "GatewayDown" && a.state === "firing");
    expect(await firing()).toBe(false);
    await gw.stopGateway();
    await until("GatewayDown to fire", firing);
    const alert = (await prom.alerts()).find((a) => a.labels.alertname === "GatewayDown");
    expect(alert?.labels).toMatchObject({ job: "gateway", instance: gw.target, severity: "critical" });
  });
});
