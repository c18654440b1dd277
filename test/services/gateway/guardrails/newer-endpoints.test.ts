/**
 * The PII guardrail (enforce, e-mail masked) on the native `/v1/responses` and `/v1/messages` paths, through the
 * gateway to the Responses and Messages fakes, which record the text they received: an e-mail address placed in the less common fields
 * of either API (Responses `function_call` / `function_call_output` items and their extra fields, a message
 * item's `name`, `reasoning`, `include`, an image's `detail` and URL; Messages `citations`, image and document
 * URL sources, `mcp_servers`) reaches the upstream as `<EMAIL_ADDRESS>`; a body with nothing to mask goes
 * upstream as the client's own text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../fixtures/anthropic-messages.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../fixtures/openai-responses.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../endpoints/chat-completions/harness.js";
import { EMAIL, piiPolicy, testEngine } from "./helpers.js";

type Body = Record<string, unknown>;

const user = (text: string) => ({ role: "user", content: [{ type: "input_text", text }] });
const call = (extra: Body = {}) => ({
  type: "function_call",
  call_id: "call_1",
  name: "lookup",
  arguments: "{}",
  ...extra,
});
const output = (extra: Body = {}) => ({
  type: "function_call_output",
  call_id: "call_1",
  output: "done",
  ...extra,
});
const image = (extra: Body) => ({
  role: "user",
  content: [{ type: "input_image", image_url: "https://img.example.com/a.png", detail: "auto", ...extra }],
});

/** Responses bodies with the e-mail in a field the per-field extraction did not read. */
const RESPONSES: Array<[string, Body]> = [
  ["function_call extra field", { input: [user("hi"), call({ x_note: `cc ${EMAIL}` }), output()] }],
  [
    "function_call_output extra field",
    { input: [user("hi"), call(), output({ x_source: `from ${EMAIL}` })] },
  ],
  ["message item name", { input: [{ ...user("hi"), name: EMAIL }] }],
  ["reasoning", { input: "hi", reasoning: { effort: "low", summary: EMAIL } }],
  ["include", { input: "hi", include: [EMAIL] }],
  ["image detail", { input: [image({ detail: EMAIL })] }],
  ["image URL query string", { input: [image({ image_url: `https://img.example.com/a.png?to=${EMAIL}` })] }],
];

const text = (t: string, extra: Body = {}) => ({ type: "text", text: t, ...extra });
const ask = (content: unknown[]) => [{ role: "user", content }];

/** Messages bodies with the e-mail in a field the per-field extraction did not read. */
const MESSAGES: Array<[string, Body]> = [
  [
    "text block citations",
    {
      messages: ask([
        text("hi", {
          citations: [{ type: "char_location", cited_text: `write to ${EMAIL}`, document_index: 0 }],
        }),
      ]),
    },
  ],
  [
    "system block citations",
    {
      system: [text("be brief", { citations: [{ type: "page_location", document_title: EMAIL }] })],
      messages: ask([text("hi")]),
    },
  ],
  [
    "image URL source",
    {
      messages: ask([
        { type: "image", source: { type: "url", url: `https://img.example.com/a.png?u=${EMAIL}` } },
        text("what is this?"),
      ]),
    },
  ],
  [
    "document URL source",
    {
      messages: ask([
        { type: "document", source: { type: "url", url: `https://docs.example.com/a.pdf?owner=${EMAIL}` } },
        text("summarise"),
      ]),
    },
  ],
  [
    "mcp_servers URL",
    {
      messages: ask([text("hi")]),
      mcp_servers: [{ type: "url", url: `https://mcp.example.com/sse?user=${EMAIL}`, name: "crm" }],
    },
  ],
  [
    "mcp_servers name",
    {
      messages: ask([text("hi")]),
      mcp_servers: [{ type: "url", url: "https://mcp.example.com/sse", name: EMAIL }],
    },
  ],
];

let responsesUpstream: FakeResponsesUpstream;
let anthropic: FakeAnthropic;
let responses: ChatHarness;
let messages: ChatHarness;

beforeAll(async () => {
  responsesUpstream = await startFakeResponsesUpstream();
  anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" });
  const guard = testEngine({ pii: piiPolicy({ entities: { EMAIL_ADDRESS: "MASK" } }) }).engine;
  responses = await startChatHarness({
    upstreamUrl: responsesUpstream.url,
    guard,
    extraParams: '    model_info:\n      supported_endpoints: ["/v1/responses"]\n',
  });
  messages = await startChatHarness({
    upstreamUrl: anthropic.url,
    guard,
    upstreamModel: "anthropic/claude-rec",
    extraParams: "      api_key: sk-ant-upstream\n",
  });
});
afterAll(async () => {
  await responses?.close();
  await messages?.close();
  await responsesUpstream?.close();
  await anthropic?.close();
});

/** Posts `body` (an object, or the client's own JSON text) and returns the text its upstream received. */
async function sent(h: ChatHarness, path: string, body: Body | string): Promise<string> {
  const received = h === messages ? anthropic.requests : responsesUpstream.requests;
  const before = received.length;
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${VIRTUAL_KEY}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  expect(res.status, await res.text()).toBe(200);
  expect(received.length).toBe(before + 1);
  return received.at(-1)!.rawBody;
}

describe("no e-mail reaches the upstream from the less common fields", () => {
  for (const [name, body] of RESPONSES) {
    it(`/v1/responses: ${name}`, async () => {
      const received = await sent(responses, "/v1/responses", { model: "general", ...body });
      expect(received).not.toContain(EMAIL);
      expect(received).toContain("<EMAIL_ADDRESS>");
    });
  }
  for (const [name, body] of MESSAGES) {
    it(`/v1/messages: ${name}`, async () => {
      const received = await sent(messages, "/v1/messages", { model: "general", max_tokens: 16, ...body });
      expect(received).not.toContain(EMAIL);
      expect(received).toContain("<EMAIL_ADDRESS>");
    });
  }
});

describe("nothing to mask", () => {
  it("the client's JSON text goes upstream as written, only the model name spliced in", async () => {
    const client = `{ "input" : [ {"role":"user", "content": [{"type":"input_text","text":"hi \\"there\\""}]} ],\n "model":"general", "reasoning": {"effort": "low"}, "x_note": "plain" }\n`;
    const received = await sent(responses, "/v1/responses", client);
    expect(received).toBe(client.replace('"model":"general"', '"model":"fake-model"'));
  });

  it("a masked body is serialised again, the mask where the e-mail was", async () => {
    const client = `{ "input" : "hi", "model":"general", "x_note": {"deep": ["${EMAIL}"]} }`;
    const received = JSON.parse(await sent(responses, "/v1/responses", client)) as Body;
    expect(received.x_note).toEqual({ deep: ["<EMAIL_ADDRESS>"] });
  });
});
