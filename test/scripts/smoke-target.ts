/**
 * What scripts/smoke-test.sh talks to in the tests of the scripts, all real but what cannot run here:
 * - a real gateway (in process) serving `general` from the OpenAI-compatible upstream fake, tracing into the
 *   Langfuse contract fake (test/fixtures/langfuse.ts), its prompt_injection guardrail calling the real scanner
 *   with the tiny model (test/helpers/scanner.ts), PII with the built-in recognizers;
 * - a real Prometheus (Debian's `prometheus`) scraping that gateway every second;
 * - on request, a second real gateway with tracing and guardrails off, scraped by its own Prometheus, for the
 *   checks that must fail.
 * The guardrails read GUARD_SCANNER_API_BASE from the process environment: this module sets it (vitest runs
 * each test file in its own fork).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type FakeLangfuse, startFakeLangfuse } from "../fixtures/langfuse.js";
import { type FakeUpstream, startFakeUpstream } from "../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { type PrometheusProcess, startPrometheus, writeScrapeConfig } from "../helpers/prometheus.js";
import { startTinyScanner, type TinyScanner } from "../helpers/scanner.js";

/** Trace viewer key pair the Langfuse fake accepts. */
export const TRACE_PUBLIC_KEY = "pk-lf-smoke";
export const TRACE_SECRET_KEY = "sk-lf-smoke";
export { MASTER_KEY };

/** A real gateway and a real Prometheus scraping only it. */
export interface SmokeGateway {
  gateway: TestGateway;
  /** The gateway's base URL (no /v1). */
  url: string;
  prometheus: PrometheusProcess;
}

/** The running parts. */
export interface SmokeTarget {
  upstream: FakeUpstream;
  langfuse: FakeLangfuse;
  scanner: TinyScanner;
  /** Tracing and guardrails on: every check can pass. */
  full: SmokeGateway;
  /** Tracing and guardrails off (only when asked for). */
  bare: SmokeGateway | undefined;
  /** smoke-test.sh options for `target` (gateway, master key, trace viewer and its keys, Prometheus). */
  options(target: SmokeGateway, keys?: { publicKey: string; secretKey: string }): string[];
  close(): Promise<void>;
}

/**
 * Starts the fakes, the scanner, the gateway(s) and their Prometheus servers.
 * @throws Error when `prometheus` is not installed or does not become ready.
 */
export async function startSmokeTarget(options: { bare?: boolean } = {}): Promise<SmokeTarget> {
  const dirs: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  const temp = (prefix: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const scraped = async (gateway: TestGateway): Promise<SmokeGateway> => {
    closers.push(() => gateway.close());
    const dir = temp("smoke-prometheus-");
    const prometheus = await startPrometheus(
      writeScrapeConfig(dir, { gateway: new URL(gateway.url).host }),
      dir,
    );
    closers.push(() => prometheus.stop());
    return { gateway, url: gateway.url, prometheus };
  };
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => {});
    delete process.env.GUARD_SCANNER_API_BASE;
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };

  try {
    const upstream = await startFakeUpstream();
    closers.push(() => upstream.close());
    const langfuse = await startFakeLangfuse({ publicKey: TRACE_PUBLIC_KEY, secretKey: TRACE_SECRET_KEY });
    closers.push(() => langfuse.close());
    const scanner = await startTinyScanner();
    closers.push(() => scanner.close());
    process.env.GUARD_SCANNER_API_BASE = scanner.url;
    delete process.env.PII_ANALYZER_API_BASE;

    const config = `model_list:\n${deployment("general", upstream.url)}`;
    const full = await scraped(
      await startTestGateway(config, {
        TRACE_HOST: langfuse.url,
        TRACE_PUBLIC_KEY,
        TRACE_SECRET_KEY,
      }),
    );
    let bare: SmokeGateway | undefined;
    if (options.bare) {
      const policy = path.join(temp("smoke-policy-"), "policy.yaml");
      writeFileSync(policy, "guardrails: {}\n");
      bare = await scraped(await startTestGateway(config, { GUARDRAIL_POLICY: policy }));
    }
    return {
      upstream,
      langfuse,
      scanner,
      full,
      bare,
      options: (target, keys = langfuse) => [
        "--gateway-url",
        target.url,
        "--key",
        MASTER_KEY,
        "--trace-url",
        langfuse.url,
        "--trace-public-key",
        keys.publicKey,
        "--trace-secret-key",
        keys.secretKey,
        "--metrics-url",
        target.prometheus.url,
      ],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
