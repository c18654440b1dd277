/**
 * The assembled gateway (createGateway, virtual keys in a fresh Postgres database, a guardrail policy file) in
 * front of the embeddings/completions fake and the chat fake, for the embeddings and completions suites:
 *
 * - `embed-small` → `openai/text-embedding-3-small` ($0.02 per million input tokens, list price);
 * - `instruct` → `openai/gpt-3.5-turbo-instruct` ($1.50 / $2.00 per million tokens, list price);
 * - `claude` → `anthropic/claude-haiku-4-5` (a provider that serves neither API);
 * - `general` → the chat fake as `openai/gpt-4o` at $0.001 per token (to spend a budget quickly; the model's
 *   tokenizer bounds its reservation's input, so the fake's answers past `max_tokens` spend more than it).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { metricValue } from "../../../helpers/metrics.js";
import { countingPool, createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { waitFor } from "../../../helpers/redis.js";

/** One spend row as the tests read it back. */
export interface SpendRow {
  call_type: string;
  spend: number;
  prompt_tokens: number;
  completion_tokens: number;
  stream: boolean;
  model_group: string;
}

export interface OpenAIApisGateway {
  gw: TestGateway;
  fake: FakeEmbeddingsCompletions;
  chat: FakeUpstream;
  /** A virtual key made with the master key (admin API `/key/generate`). */
  newKey(body?: Record<string, unknown>): Promise<string>;
  /** The spend row of `requestId`, once written (waits up to 5 s). */
  spendRow(requestId: string): Promise<SpendRow>;
  /** `litellm_proxy_total_requests_metric_total` for `requested_model` and `status_code`. */
  requests(model: string, status: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts the fakes, a database and the gateway with `policy` (a GUARDRAIL_POLICY YAML text). */
export async function startOpenAIApisGateway(policy: string): Promise<OpenAIApisGateway> {
  const fake = await startFakeEmbeddingsCompletions();
  const chat = await startFakeUpstream();
  const db: TestDatabase = await createTestDatabase();
  const policyPath = join(mkdtempSync(join(tmpdir(), "gw-policy-")), "policy.yaml");
  writeFileSync(policyPath, policy);
  delete process.env.PII_ANALYZER_API_BASE;
  const config = [
    "model_list:",
    deployment("embed-small", fake.url).replace("openai/fake-model", "openai/text-embedding-3-small"),
    deployment("instruct", fake.url).replace("openai/fake-model", "openai/gpt-3.5-turbo-instruct"),
    deployment("claude", fake.url, "      api_key: sk-ant-test\n").replace(
      "openai/fake-model",
      "anthropic/claude-haiku-4-5",
    ),
    deployment(
      "general",
      chat.url,
      "      input_cost_per_token: 0.001\n      output_cost_per_token: 0.001\n",
    ).replace("openai/fake-model", "openai/gpt-4o"),
  ].join("\n");
  const gw = await startTestGateway(
    config,
    { DATABASE_URL: db.url, GUARDRAIL_POLICY: policyPath },
    { store: { flushIntervalMs: 50 } },
  );
  const { pool } = countingPool(db.url);
  return {
    gw,
    fake,
    chat,
    async newKey(body = {}) {
      const res = await adminCall<{ key: string }>(gw, "POST", "/key/generate", body);
      expect(res.status).toBe(200);
      return res.body.key;
    },
    async spendRow(requestId) {
      let row: SpendRow | undefined;
      await waitFor(`the spend row of ${requestId}`, async () => {
        const { rows } = await pool.query(
          "SELECT call_type, spend::float8 AS spend, prompt_tokens, completion_tokens, stream, model_group FROM spend_logs WHERE request_id = $1",
          [requestId],
        );
        row = rows[0] as SpendRow | undefined;
        return row !== undefined;
      });
      return row!;
    },
    requests: (model, status) =>
      metricValue(gw.gateway.metrics.registry, "litellm_proxy_total_requests_metric_total", {
        requested_model: model,
        status_code: status,
      }),
    async close() {
      await gw.close();
      await Promise.all([fake.close(), chat.close(), pool.end()]);
      await db.drop();
    },
  };
}
