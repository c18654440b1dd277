import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../../bench/lib/children.js";
import { chatRequestTexts } from "../../../../services/gateway/src/endpoints/chat-completions/texts.js";
import { maskText } from "../../../../services/gateway/src/guardrails/pii/mask.js";
import { presidioAnalyzer } from "../../../../services/gateway/src/guardrails/pii/presidio-client.js";
import { type FakePresidio, startFakePresidio } from "../../../fixtures/presidio-analyzer.js";
import { call, EMAIL, piiPolicy, refusal, testEngine } from "./helpers.js";

const PERSON = "Ada Lovelace";

describe("PII through Presidio's REST API (contract fake)", () => {
  let presidio: FakePresidio;
  beforeAll(async () => {
    presidio = await startFakePresidio([
      { entity_type: "EMAIL_ADDRESS", value: EMAIL, score: 1 },
      { entity_type: "PERSON", value: PERSON, score: 0.85 },
      { entity_type: "PHONE_NUMBER", value: "555 0100", score: 0.4 },
    ]);
  });
  afterAll(() => presidio.close());

  const analyzer = () => presidioAnalyzer({ apiBase: presidio.url, timeoutMs: 2000 });

  it("the fake answers Presidio's documented shapes", async () => {
    const health = await request(`${presidio.url}/health`);
    expect(await health.body.text()).toBe("Presidio Analyzer service is up");
    const single = await request(`${presidio.url}/analyze`, {
      method: "POST",
      body: JSON.stringify({ text: `hi ${PERSON}`, language: "en", return_decision_process: true }),
    });
    const results = (await single.body.json()) as Array<Record<string, unknown>>;
    expect(results[0]).toMatchObject({ entity_type: "PERSON", start: 3, end: 15, score: 0.85 });
    expect(results[0]?.analysis_explanation).toMatchObject({
      recognizer: "FakeRecognizer",
      original_score: 0.85,
    });
    const anonymized = await request(`${presidio.url}/anonymize`, {
      method: "POST",
      body: JSON.stringify({ text: `hi ${PERSON}`, analyzer_results: results }),
    });
    expect(await anonymized.body.json()).toEqual({
      text: "hi <PERSON>",
      items: [{ end: 11, entity_type: "PERSON", operator: "replace", start: 3, text: "<PERSON>" }],
    });
  });

  it("one /analyze call per request with every text as an array; masked like Presidio's replace operator", async () => {
    const t = testEngine(
      { pii: piiPolicy({ entities: { EMAIL_ADDRESS: "MASK", PERSON: "MASK", PHONE_NUMBER: "MASK" } }) },
      { analyzer: analyzer() },
    );
    const before = presidio.analyzeCalls.length;
    const emoji = `🙂 ${PERSON} writes from ${EMAIL}`;
    const c = call([
      { role: "system", content: "Be brief." },
      emoji,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "1", type: "function", function: { name: "f", arguments: `{"who":"${PERSON}"}` } },
        ],
      },
      "call 555 0100",
    ]);
    const out = await t.engine.checkInput(c, chatRequestTexts);
    const calls = presidio.analyzeCalls.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      text: ["Be brief.", emoji, `{"who":"${PERSON}"}`, "call 555 0100"],
      language: "en",
      entities: ["EMAIL_ADDRESS", "PERSON", "PHONE_NUMBER"],
    });
    // Offsets come back in code points and are converted: the emoji does not shift the mask.
    expect(c.body.messages[1]?.content).toBe("🙂 <PERSON> writes from <EMAIL_ADDRESS>");
    // Our masking equals what Presidio's anonymizer makes of the same analyzer results.
    const analyzed = await request(`${presidio.url}/analyze`, {
      method: "POST",
      body: JSON.stringify({ text: emoji, language: "en" }),
    });
    const anonymized = await request(`${presidio.url}/anonymize`, {
      method: "POST",
      body: JSON.stringify({ text: emoji, analyzer_results: await analyzed.body.json() }),
    });
    expect(((await anonymized.body.json()) as { text: string }).text).toBe(c.body.messages[1]?.content);
    // The phone number scored 0.4, under the ALL threshold of 0.5: thresholds are applied by the gateway.
    expect(c.body.messages[3]?.content).toBe("call 555 0100");
    expect(out.decisions[0]).toMatchObject({ action: "mask", entities: ["PERSON", "EMAIL_ADDRESS"] });
  });

  it("the allow list is applied to Presidio's detections", async () => {
    const t = testEngine({ pii: piiPolicy({ allowList: [EMAIL] }) }, { analyzer: analyzer() });
    const c = call([`mail ${EMAIL}`]);
    expect((await t.engine.checkInput(c, chatRequestTexts)).decisions[0]?.action).toBe("allow");
    expect(c.body.messages[0]?.content).toBe(`mail ${EMAIL}`);
  });

  it("maskText keeps the higher-scored of overlapping spans", () => {
    expect(
      maskText("call 4111111111111111", [{ entityType: "CREDIT_CARD", start: 5, end: 21, score: 1 }]),
    ).toBe("call <CREDIT_CARD>");
  });

  describe("analyzer down", () => {
    it("fail_closed: 503 naming the guardrail", async () => {
      presidio.failNext(1, 500);
      const t = testEngine({ pii: piiPolicy({ onError: "fail_closed" }) }, { analyzer: analyzer() });
      const error = await refusal(() => t.engine.checkInput(call([`mail ${EMAIL}`]), chatRequestTexts));
      expect(error).toMatchObject({ status: 503, code: "guardrail_unavailable" });
      expect(error.message).toBe(
        "Guardrail pii is unavailable (analyzer answered HTTP 500); the call was refused (on_error: fail_closed).",
      );
      expect(await t.errors("pii")).toBe(1);
    });

    it("fail_open: passes unchanged with an error decision", async () => {
      const url = `http://127.0.0.1:${await freePort()}`; // nothing listens there
      const t = testEngine(
        { pii: piiPolicy({ onError: "fail_open" }) },
        { analyzer: presidioAnalyzer({ apiBase: url, timeoutMs: 500 }) },
      );
      const c = call([`mail ${EMAIL}`]);
      const out = await t.engine.checkInput(c, chatRequestTexts);
      expect(out.decisions).toEqual([
        expect.objectContaining({ action: "error", detail: "analyzer unreachable" }),
      ]);
      expect(c.body.messages[0]?.content).toBe(`mail ${EMAIL}`);
      expect(await t.count("pii", "error")).toBe(1);
    });

    it("a slow analyzer times out", async () => {
      presidio.delayMs = 200;
      const t = testEngine(
        { pii: piiPolicy({ onError: "fail_closed" }) },
        { analyzer: presidioAnalyzer({ apiBase: presidio.url, timeoutMs: 30 }) },
      );
      const error = await refusal(() => t.engine.checkInput(call(["hello"]), chatRequestTexts));
      presidio.delayMs = 0;
      expect(error.message).toContain("analyzer timed out after 30 ms");
    });
  });
});
