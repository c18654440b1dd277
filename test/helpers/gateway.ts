/**
 * Starts a real gateway (createGateway, listening on an ephemeral port) with a config file written for the
 * test, and an official `openai` client pointed at it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { readEnv } from "../../services/gateway/src/config/env.js";
import { createGateway, type Gateway, type GatewayOptions } from "../../services/gateway/src/gateway.js";

export const MASTER_KEY = "sk-test-master-key-0123456789";

export interface TestGateway {
  gateway: Gateway;
  /** Base URL without /v1, e.g. http://127.0.0.1:4321. */
  url: string;
  /** An `openai` client using the master key, no retries. */
  client: OpenAI;
  /** An `openai` client with another key. */
  clientWith(apiKey: string): OpenAI;
  close(): Promise<void>;
}

/** Writes a config file in a fresh temporary folder; returns its path. */
export function writeConfig(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "gw-config-")), "config.yaml");
  writeFileSync(path, yaml);
  return path;
}

/**
 * Starts a gateway with `configYaml` and extra environment variables; its spend spool is a fresh temporary
 * folder unless `env` names one (GATEWAY_SPOOL_DIR).
 */
export async function startTestGateway(
  configYaml: string,
  env: Record<string, string> = {},
  options: GatewayOptions = {},
): Promise<TestGateway> {
  const gateway = await createGateway(
    readEnv({
      GATEWAY_CONFIG: writeConfig(configYaml),
      GATEWAY_MASTER_KEY: MASTER_KEY,
      GATEWAY_SPOOL_DIR: mkdtempSync(join(tmpdir(), "gw-spool-")),
      LOG_LEVEL: "silent",
      ...env,
    }),
    options,
  );
  const url = await gateway.app.listen({ port: 0, host: "127.0.0.1" });
  const clientWith = (apiKey: string) =>
    new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0, timeout: 15_000 });
  return { gateway, url, client: clientWith(MASTER_KEY), clientWith, close: () => gateway.shutdown(2000) };
}

/**
 * One admin API call (JSON body) to `gw` with `key` (default the master key); the status and the parsed JSON
 * answer. Rejects when the answer is not JSON.
 */
export async function adminCall<T = Record<string, unknown>>(
  gw: Pick<TestGateway, "url">,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  key = MASTER_KEY,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** A `model_list` entry for an OpenAI-compatible upstream at `apiBase`. */
export function deployment(modelName: string, apiBase: string, extra = ""): string {
  return `  - model_name: ${modelName}\n    litellm_params:\n      model: openai/fake-model\n      api_base: ${apiBase}\n${extra}`;
}
