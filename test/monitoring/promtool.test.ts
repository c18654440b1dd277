/**
 * monitoring/ checked by the real tools (Debian's `prometheus` and `prometheus-alertmanager` packages):
 * `promtool check config`, `promtool check rules`, `promtool test rules` with a unit test for every alert,
 * and `amtool check-config` on the alertmanager config as the stack renders it.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { renderAlertmanagerConfig } from "../../infra/monitoring-files.js";
import { MONITORING_DIR, prometheusToolsMissing, RULES_DIR, rules } from "./harness.js";

const run = promisify(execFile);
const TESTS_DIR = path.join(MONITORING_DIR, "rule-tests");
const skip = prometheusToolsMissing();

/** Runs a tool; resolves with its exit code and output instead of throwing on a non-zero exit. */
async function tool(command: string, args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(command, args, { timeout: 30_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

const ruleFiles = () =>
  readdirSync(RULES_DIR)
    .filter((f) => f.endsWith(".yml"))
    .map((f) => path.join(RULES_DIR, f));
const testFiles = () =>
  readdirSync(TESTS_DIR)
    .filter((f) => f.endsWith(".yml"))
    .map((f) => path.join(TESTS_DIR, f));

describe.skipIf(skip !== undefined)(`Prometheus tools on monitoring/ ${skip ?? ""}`, () => {
  it("promtool check config accepts prometheus.yml and the rule files it loads", async () => {
    const result = await tool("promtool", ["check", "config", path.join(MONITORING_DIR, "prometheus.yml")]);
    expect(result.output).toContain("SUCCESS");
    expect(result.code, result.output).toBe(0);
    // The rule_files glob finds every rule file.
    for (const file of ruleFiles()) expect(result.output).toContain(path.basename(file));
  });

  it("promtool check rules accepts every rule file and rejects a broken one", async () => {
    const result = await tool("promtool", ["check", "rules", ...ruleFiles()]);
    expect(result.code, result.output).toBe(0);
    const broken = path.join(mkdtempSync(path.join(tmpdir(), "rules-")), "broken.yml");
    writeFileSync(
      broken,
      "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: sum(rate(a[5m])\n",
    );
    expect((await tool("promtool", ["check", "rules", broken])).code).not.toBe(0);
  });

  it("promtool test rules passes every rule unit test", async () => {
    const result = await tool("promtool", ["test", "rules", ...testFiles()]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toContain("FAILED");
  });

  it("has a unit test in which every alert fires", () => {
    const fired = new Set<string>();
    for (const file of testFiles()) {
      const doc = parseYaml(readFileSync(file, "utf8")) as {
        tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
      };
      for (const t of doc.tests) {
        for (const a of t.alert_rule_test ?? []) if (a.exp_alerts.length > 0) fired.add(a.alertname);
      }
    }
    const alerts = rules().flatMap((r) => (r.alert ? [r.alert] : []));
    expect(alerts.length).toBeGreaterThan(0);
    expect(alerts.filter((a) => !fired.has(a))).toEqual([]);
  });

  it("amtool check-config accepts alertmanager.yml as shipped and as the stack renders it", async () => {
    const text = readFileSync(path.join(MONITORING_DIR, "alertmanager.yml"), "utf8");
    const dir = mkdtempSync(path.join(tmpdir(), "alertmanager-"));
    const variants = {
      "shipped.yml": text,
      "with-webhook.yml": renderAlertmanagerConfig(text, "https://hooks.example.com/alerts/T0KEN"),
      "without-webhook.yml": renderAlertmanagerConfig(text, undefined),
    };
    for (const [name, content] of Object.entries(variants)) {
      writeFileSync(path.join(dir, name), content);
      const result = await tool("amtool", ["check-config", path.join(dir, name)]);
      expect(result.code, `${name}: ${result.output}`).toBe(0);
      expect(result.output).toContain("SUCCESS");
    }
  });
});
