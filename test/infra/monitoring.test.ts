/**
 * The monitoring containers under Pulumi mocks: they ship every file of monitoring/ (Prometheus config and
 * rules, the alertmanager config with ALERT_WEBHOOK_URL filled in as a secret, Grafana provisioning and
 * dashboards), and a missing file fails the program with its name.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { withScrapeToken } from "../../infra/scrape-token.js";
import {
  container,
  installMocks,
  isSecretValue,
  type MockedRun,
  runPlatform,
  stackSettings,
} from "./harness.js";

const WEBHOOK = "https://hooks.example.com/alerts/T0KEN";
let run: MockedRun;
let files: typeof import("../../infra/monitoring-files.js");
let REPO_ROOT: string;

beforeAll(async () => {
  await installMocks("local");
  const config = await import("../../infra/config.js");
  files = await import("../../infra/monitoring-files.js");
  REPO_ROOT = (await import("../../infra/files.js")).REPO_ROOT;
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(
    config.parseConfig(await stackSettings("local"), { ...env, ALERT_WEBHOOK_URL: WEBHOOK }),
  );
});

const repoFile = (rel: string) => readFileSync(path.join(REPO_ROOT, rel), "utf8");

describe("monitoring containers", () => {
  it("ship prometheus.yml and every rule file to the metrics container", () => {
    const uploads = container(run, "metrics").uploads;
    // The repository's file plus the gateway's METRICS_TOKEN on its scrape job (the same one the gateway gets).
    const token = container(run, "gateway").env.METRICS_TOKEN;
    expect(token).toBeTruthy();
    expect(uploads.find((u) => u.file === "/etc/prometheus/prometheus.yml")?.content).toBe(
      withScrapeToken(repoFile("monitoring/prometheus.yml"), "gateway", String(token)),
    );
    const rules = readdirSync(path.join(REPO_ROOT, "monitoring/rules")).filter((f) => f.endsWith(".yml"));
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(uploads.find((u) => u.file === `/etc/prometheus/rules/${rule}`)?.content).toBe(
        repoFile(`monitoring/rules/${rule}`),
      );
    }
  });

  it("ship the datasource, the dashboard provider and both dashboards to Grafana", () => {
    const shipped = container(run, "dashboards").uploads.map((u) => u.file);
    expect(shipped).toEqual(
      expect.arrayContaining([
        "/etc/grafana/provisioning/datasources/prometheus.yml",
        "/etc/grafana/provisioning/dashboards/platform.yml",
        "/var/lib/grafana/dashboards/litellm-overview.json",
        "/var/lib/grafana/dashboards/platform.json",
      ]),
    );
    // The provider reads the folder the dashboards are uploaded to.
    const provider = parseYaml(repoFile("monitoring/grafana/provisioning/dashboards/platform.yml")) as {
      providers: { options: { path: string } }[];
    };
    expect(provider.providers[0]?.options.path).toBe(files.GRAFANA_DASHBOARDS_DIR);
  });

  it("put ALERT_WEBHOOK_URL into the alertmanager's webhook receiver, as a secret", () => {
    const am = container(run, "alertmanager");
    expect(am.uploads).toHaveLength(1);
    const config = parseYaml(am.uploads[0]!.content) as {
      receivers: { name: string; webhook_configs?: { url: string }[] }[];
    };
    expect(config.receivers[0]?.webhook_configs?.[0]?.url).toBe(WEBHOOK);
    const reg = run.registered.find(
      (r) => r.type === "docker:index/container:Container" && r.inputs.name === "alertmanager",
    );
    // Pulumi marks the whole `uploads` input secret once one element is.
    expect(isSecretValue(reg?.rawInputs.uploads)).toBe(true);
  });
});

describe("monitoringUploads", () => {
  function copyWithout(rel: string): string {
    const root = mkdtempSync(path.join(tmpdir(), "monitoring-copy-"));
    cpSync(path.join(REPO_ROOT, "monitoring"), path.join(root, "monitoring"), { recursive: true });
    rmSync(path.join(root, rel), { recursive: true });
    return root;
  }

  it.each([
    ...["prometheus.yml", "alertmanager.yml"].map((f) => `monitoring/${f}`),
    "monitoring/grafana/provisioning/datasources/prometheus.yml",
    "monitoring/grafana/provisioning/dashboards/platform.yml",
    "monitoring/grafana/dashboards/litellm-overview.json",
    "monitoring/grafana/dashboards/platform.json",
  ])("fails naming %s when it is missing", (rel) => {
    const root = copyWithout(rel);
    expect(() => files.monitoringUploads(undefined, root)).toThrow(`${rel} is missing`);
    rmSync(root, { recursive: true });
  });

  it("fails naming monitoring/rules/ when the rules are missing", () => {
    const root = copyWithout("monitoring/rules");
    expect(() => files.monitoringUploads(undefined, root)).toThrow("monitoring/rules/ is missing");
    rmSync(root, { recursive: true });
  });
});

describe("renderAlertmanagerConfig", () => {
  const text = () => repoFile("monitoring/alertmanager.yml");

  it("without a webhook URL drops the placeholder webhook and keeps the receiver the routes name", () => {
    const rendered = files.renderAlertmanagerConfig(text(), undefined);
    expect(rendered).not.toContain(files.WEBHOOK_PLACEHOLDER);
    const config = parseYaml(rendered) as {
      route: { receiver: string };
      receivers: Record<string, unknown>[];
    };
    expect(config.receivers.map((r) => r.name)).toContain(config.route.receiver);
    expect(config.receivers[0]).not.toHaveProperty("webhook_configs");
  });

  it("refuses a webhook URL when the file has no placeholder to put it in", () => {
    const edited = text().replace(files.WEBHOOK_PLACEHOLDER, "http://mine.example/hook");
    expect(() => files.renderAlertmanagerConfig(edited, WEBHOOK)).toThrow(/no webhook_configs url/);
    expect(files.renderAlertmanagerConfig(edited, undefined)).toContain("http://mine.example/hook");
  });
});
