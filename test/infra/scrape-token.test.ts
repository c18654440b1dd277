/**
 * The stack's Prometheus sends the gateway's METRICS_TOKEN: prometheus.yml as uploaded carries it on the
 * gateway's scrape job only, and the real `promtool check config` accepts the result.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { withScrapeToken } from "../../infra/scrape-token.js";

const monitoring = path.resolve(import.meta.dirname, "../../monitoring");

describe("the gateway's scrape job", () => {
  it("sends METRICS_TOKEN as a bearer token, and promtool accepts the file", async () => {
    const token = 'tok"en:with #yaml\\chars';
    const rendered = withScrapeToken(
      readFileSync(path.join(monitoring, "prometheus.yml"), "utf8"),
      "gateway",
      token,
    );
    const jobs = (parseYaml(rendered) as { scrape_configs: Array<Record<string, unknown>> }).scrape_configs;
    expect(jobs.find((j) => j.job_name === "gateway")?.authorization).toEqual({
      type: "Bearer",
      credentials: token,
    });
    expect(jobs.filter((j) => j.authorization !== undefined)).toHaveLength(1);
    const dir = mkdtempSync(path.join(tmpdir(), "scrape-token-"));
    cpSync(path.join(monitoring, "rules"), path.join(dir, "rules"), { recursive: true });
    writeFileSync(path.join(dir, "prometheus.yml"), rendered);
    const { stdout } = await promisify(execFile)("promtool", [
      "check",
      "config",
      path.join(dir, "prometheus.yml"),
    ]);
    expect(stdout).toMatch(/SUCCESS/);
    expect(() => withScrapeToken(rendered, "nope", token)).toThrow(/no scrape job "nope"/);
  });
});
