/**
 * Micro-benchmark of a chat call's booking (`npx tsx bench/micro/booking.ts`): `measureCall` (tokens and cost, before the
 * response) and `recordCall` (settle, metrics; after the response since the review pass), with the gateway's real
 * metrics and an in-process admission, no spend recorder. Prints µs per call for three rounds.
 */
import { measureCall, recordCall } from "../../services/gateway/src/accounting/call-accounting.js";
import { InProcessAdmitter } from "../../services/gateway/src/limits/memory-admitter.js";
import { createMetrics } from "../../services/gateway/src/metrics/metrics.js";

const metrics = createMetrics();
const admitter = new InProcessAdmitter({ clock: { now: () => Date.now() } });
const deployment = {
  id: "d1",
  modelName: "general",
  provider: "openai",
  upstreamModel: "gpt-4o-mini",
  apiBase: "http://x/v1",
  inputCostPerToken: 1e-7,
  outputCostPerToken: 4e-7,
} as never;
const subject = {
  scope: "key",
  id: "k".repeat(64),
  rpmLimit: 1e9,
  tpmLimit: 1e12,
  maxBudget: 1e6,
  budgetDuration: null,
  budgetResetAt: null,
  spend: 0,
} as const;
const auth = {
  kind: "virtual",
  keyHash: "k".repeat(64),
  keyAlias: "ci",
  userId: "u1",
  models: [],
  expiresAt: null,
  subjects: [subject],
  namesUsers: false,
  metadata: {},
} as never;
const labels = { hashed_api_key: "k".repeat(64), api_key_alias: "ci", user: "u1", team: "", team_alias: "" };
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const N = 200_000;
for (let round = 0; round < 3; round++) {
  let measureNs = 0n,
    recordNs = 0n;
  for (let i = 0; i < N; i++) {
    const admission = await admitter.admit({
      subjects: [subject],
      model: "general",
      estimatedCost: 0.001,
      estimatedTokens: 100,
    });
    const record = {
      requestId: String(i),
      auth,
      labels,
      requestedModel: "general",
      deployment,
      admission,
      stream: false,
      callType: "acompletion",
      startedAtEpoch: Date.now(),
      startedAt: performance.now(),
      upstreamMs: 1,
      estimatedPromptTokens: 10,
    };
    const t0 = process.hrtime.bigint();
    const amounts = measureCall(record, usage, 0, Date.now);
    const t1 = process.hrtime.bigint();
    recordCall(record, amounts, 200, metrics, undefined);
    const t2 = process.hrtime.bigint();
    measureNs += t1 - t0;
    recordNs += t2 - t1;
  }
  console.log(
    `round ${round + 1}: measureCall ${(Number(measureNs) / N / 1000).toFixed(2)} µs, recordCall (now after the response) ${(Number(recordNs) / N / 1000).toFixed(2)} µs per call`,
  );
}
