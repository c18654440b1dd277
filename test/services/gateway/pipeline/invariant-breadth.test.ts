/**
 * The money invariant over the paths `invariant.test.ts` leaves out, tested generatively (fast-check): the native
 * upstreams (Responses relayed to an OpenAI Responses server, Messages relayed to Anthropic's API), chat translated
 * to Anthropic, `/v1/messages/count_tokens`, an upstream that ignores the caps it is sent and reports no usage (a
 * self-hosted server, declared `model_info.ignores_output_cap: true`), and the PII guardrail blocking card numbers.
 * Calls go concurrently to two gateway instances sharing their limits through Redis. After each run: the spend
 * booked on both instances is within the key's budget, no card number reached an upstream, no answer was a 5xx
 * (a client's call here is always well-formed), and count_tokens answered only 200, a refusal by the limits (429)
 * or the guardrail's block (400).
 *
 * Fixed seed; a failing seed found later belongs in `SEEDS` below.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Limits } from "../../../../services/gateway/src/limits/index.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type MisbehavingUpstream,
  startMisbehavingUpstream,
} from "../../../fixtures/misbehaving-upstream.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../fixtures/openai-responses.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment } from "../../../helpers/gateway.js";
import { openLimits } from "../../../helpers/limits.js";
import { deleteKeys, uniquePrefix } from "../../../helpers/redis.js";
import { type ChatHarness, rowsRecorder, startChatHarness } from "../endpoints/chat-completions/harness.js";
import { CARD, piiPolicy, testEngine } from "../guardrails/helpers.js";
import { keySubject } from "../limits/subjects.js";
import { modelRequest, priced, sendCall, sum } from "./invariant-calls.js";

const prefix = uniquePrefix("invariant-breadth");

let chat: FakeUpstream;
let responses: FakeResponsesUpstream;
let anthropic: FakeAnthropic;
let sloppy: MisbehavingUpstream;
const limits: Limits[] = [];

beforeAll(async () => {
  chat = await startFakeUpstream({ honourMaxTokens: true });
  responses = await startFakeResponsesUpstream();
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  sloppy = await startMisbehavingUpstream();
  // 400 tokens whatever the cap, and no usage: the gateway counts what it relayed.
  sloppy.behave({ kind: "long", tokens: 400, perChunk: 8, usage: false });
  limits.push(await openLimits(systemClock, prefix), await openLimits(systemClock, prefix));
});
afterAll(async () => {
  for (const l of limits) await l.close();
  await deleteKeys(prefix);
  await Promise.all([chat, responses, anthropic, sloppy].map((u) => u?.close()));
});

/** `general` (the harness's chat upstream) and the aliases of the other upstreams. */
const moreConfig = () =>
  [
    deployment(
      "native-responses",
      responses.url,
      `${priced(0.0001)}    model_info:\n      supported_endpoints: ["/v1/responses"]\n`,
    ),
    "  - model_name: claude",
    "    litellm_params:",
    "      model: anthropic/claude-rec",
    `      api_base: ${anthropic.url}`,
    "      api_key: sk-ant-upstream",
    priced(0.0001).trimEnd(),
    deployment("sloppy", sloppy.url, `${priced(0.0001)}    model_info:\n      ignores_output_cap: true\n`),
    "litellm_settings:",
    "  num_retries: 0",
  ].join("\n");

/** Each endpoint with the aliases a call to it may name. */
const ROUTES = {
  chat: ["general", "claude", "sloppy"],
  responses: ["native-responses", "general", "sloppy"],
  messages: ["claude", "general"],
  count_tokens: ["claude"],
} as const;
type Endpoint = keyof typeof ROUTES;

const text = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom("漢字かな交じり文".repeat(30), "🙂🚀".repeat(40), "hello world ".repeat(20)),
  fc.constant(`charge my card ${CARD} please`),
);

const call = fc
  .record({
    endpoint: fc.constantFrom(...(Object.keys(ROUTES) as Endpoint[])),
    pick: fc.nat(),
    stream: fc.boolean(),
    cap: fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
    text,
    instance: fc.integer({ min: 0, max: 1 }),
  })
  .map((c) => ({ ...c, model: ROUTES[c.endpoint][c.pick % ROUTES[c.endpoint].length] as string }));
type Call = typeof call extends fc.Arbitrary<infer T> ? T : never;

/** The request a drawn call makes: path and JSON body. */
const request = (c: Call) =>
  modelRequest(c.endpoint, {
    model: c.model,
    content: c.text === "" ? "hi" : c.text,
    stream: c.stream,
    cap: c.cap,
  });

/** Sends a call and reads its answer to the end (a stream too). */
const send = (h: ChatHarness, c: Call) => {
  const { path, body } = request(c);
  return sendCall(h, path, body);
};

/** Every request body the recording upstreams received. */
const received = (): string[] => [
  ...chat.requests.map((r) => r.rawBody),
  ...responses.requests.map((r) => r.rawBody),
  ...anthropic.requests.map((r) => r.rawBody),
];

const SEEDS = [2029];

describe("the money invariant, native upstreams, count_tokens, cap-ignoring upstreams and the PII guard", {
  timeout: 120_000,
}, () => {
  it.each(SEEDS)("spend within the budget, no card number upstream, no 5xx (seed %i)", async (seed) => {
    const guard = testEngine({ pii: piiPolicy() }).engine;
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 10 }),
        fc.constantFrom(0.002, 0.01, 0.05, 0.2, 1),
        async (calls, budget) => {
          const spend = rowsRecorder();
          // One key on both instances: one subject, so both count against the same budget.
          const subject = keySubject({ maxBudget: budget });
          const instances = await Promise.all(
            limits.map((l) =>
              startChatHarness({
                upstreamUrl: chat.url,
                subjects: [subject],
                models: ["general", "native-responses", "claude", "sloppy"],
                moreConfig: moreConfig(),
                admitter: l.admitter,
                limits: l,
                guard,
                spend,
              }),
            ),
          );
          try {
            const statuses = await Promise.all(calls.map((c) => send(instances[c.instance]!, c)));
            calls.forEach((c, i) => {
              const key = `${c.endpoint} ${statuses[i]}`;
              seen.set(key, (seen.get(key) ?? 0) + 1);
            });
            expect(sum(spend.rows.map((r) => r.spend))).toBeLessThanOrEqual(budget + 1e-9);
            expect(statuses.filter((s) => s >= 500)).toEqual([]);
            calls.forEach((c, i) => {
              if (c.endpoint === "count_tokens") expect([200, 400, 429]).toContain(statuses[i]);
            });
            for (const body of received()) expect(body).not.toMatch(/4111[ -]?1111[ -]?1111[ -]?1111/);
          } finally {
            for (const h of instances) await h.close();
            for (const l of limits) await l.flush();
          }
        },
      ),
      { seed, numRuns: 10 },
    );
    // Not vacuous: each endpoint answered, budgets refused some calls, and the guard blocked a card number.
    for (const endpoint of Object.keys(ROUTES))
      expect(seen.get(`${endpoint} 200`) ?? 0, endpoint).toBeGreaterThan(0);
    expect([...seen].filter(([k]) => k.endsWith(" 429")).length).toBeGreaterThan(0);
    expect([...seen].filter(([k]) => k.endsWith(" 400")).length).toBeGreaterThan(0);
  });
});
