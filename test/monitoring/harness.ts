/**
 * What the monitoring suites share: the PromQL expressions of every dashboard panel and alert rule in
 * monitoring/, the metric names they read, and whether Debian's Prometheus tools are installed.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";

/** The repository's monitoring/ folder. */
export const MONITORING_DIR = fileURLToPath(new URL("../../monitoring/", import.meta.url));
export const RULES_DIR = path.join(MONITORING_DIR, "rules");
export const DASHBOARDS_DIR = path.join(MONITORING_DIR, "grafana/dashboards");

/** Whether `command` is on PATH. */
function installed(command: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the Prometheus tool suites cannot run here, or undefined when they can. In CI (`CI` set) the tools
 * are required (.ci/run installs them from .ci/apt-packages): the suites run and fail instead of skipping.
 */
export function prometheusToolsMissing(): string | undefined {
  const missing = ["promtool", "prometheus", "amtool"].filter((c) => !installed(c));
  if (missing.length === 0 || process.env.CI) return undefined;
  return `skipped: ${missing.join(", ")} not installed (apt-get install prometheus prometheus-alertmanager)`;
}

/** One PromQL expression and where it comes from. */
export interface Expression {
  /** e.g. `rules/gateway.yml GatewayDown` or `LiteLLM Overview / Requests per second by status [A]`. */
  source: string;
  expr: string;
}

/** A Grafana panel as the dashboards in monitoring/ write it. */
export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; datasource?: { type: string; uid: string } }[];
}

/** A Grafana dashboard file of monitoring/grafana/dashboards/. */
export interface Dashboard {
  file: string;
  uid: string;
  title: string;
  panels: Panel[];
}

/** Every dashboard file, parsed. */
export function dashboards(): Dashboard[] {
  return readdirSync(DASHBOARDS_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((file) => ({
      ...(JSON.parse(readFileSync(path.join(DASHBOARDS_DIR, file), "utf8")) as Omit<Dashboard, "file">),
      file,
    }));
}

/** An alerting or recording rule of monitoring/rules/. */
export interface Rule {
  file: string;
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
}

/** Every rule of every monitoring/rules/*.yml. */
export function rules(): Rule[] {
  return readdirSync(RULES_DIR)
    .filter((f) => f.endsWith(".yml"))
    .flatMap((file) => {
      const doc = parseYaml(readFileSync(path.join(RULES_DIR, file), "utf8")) as {
        groups: { rules: Omit<Rule, "file">[] }[];
      };
      return doc.groups.flatMap((g) => g.rules.map((r) => ({ file, ...r })));
    });
}

/** Every PromQL expression of the dashboards' panels and the rules. */
export function expressions(): Expression[] {
  const fromPanels = dashboards().flatMap((d) =>
    d.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ source: `${d.title} / ${p.title} [${t.refId}]`, expr: t.expr })),
    ),
  );
  const fromRules = rules().map((r) => ({ source: `rules/${r.file} ${r.alert ?? r.record}`, expr: r.expr }));
  return [...fromPanels, ...fromRules];
}

/**
 * Grafana's built-in variables replaced by durations Prometheus accepts (`$__rate_interval` → `1m`,
 * `$__range` → `1h`, `$__interval` → `15s`), so a panel's expression can be sent to /api/v1/query.
 */
export function withGrafanaVariables(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__range", "1h")
    .replaceAll("$__interval", "15s");
}

const PROMQL_WORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without"]);

/**
 * The metric names a PromQL expression reads: identifiers left after removing strings, label matchers,
 * ranges, grouping clauses and function calls. Good for the expressions of monitoring/ (checked by
 * test/monitoring/metric-names.test.ts), not a full PromQL parser.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\b[a-zA-Z_][a-zA-Z0-9_]*\s*\(/g, " (");
  const names = stripped.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(names.filter((n) => !PROMQL_WORDS.has(n.toLowerCase())))].sort();
}
