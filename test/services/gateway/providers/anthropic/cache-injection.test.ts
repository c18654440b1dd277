/**
 * LiteLLM's `cache_control_injection_points` honoured for `anthropic/` deployments: the gateway adds Anthropic's
 * `cache_control` at the declared points, on chat completions (translated) and on `/v1/messages`, and the
 * Anthropic contract fake (which refuses a malformed `cache_control` and more than 4 breakpoints, as Anthropic
 * does) accepts the result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeAnthropic, startFakeAnthropic } from "../../../../fixtures/anthropic-messages.js";
import { type FakeUpstream, startFakeUpstream } from "../../../../fixtures/openai-upstream.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../../endpoints/chat-completions/harness.js";

let anthropic: FakeAnthropic;
let openai: FakeUpstream;
let h: ChatHarness;

beforeAll(async () => {
  [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeUpstream()]);
  const deployment = (name: string, points: string) => `
  - model_name: ${name}
    litellm_params:
      model: anthropic/claude-sonnet-4-5
      api_base: "${anthropic.url}"
      api_key: sk-ant-fake
      cache_control_injection_points: ${points}`;
  const modelList = `model_list:${deployment(
    "claude-cached",
    `
        - location: message
          role: system
          control: { type: ephemeral, ttl: "1h" }
        - location: message
          index: -1`,
  )}${deployment(
    "claude-every-user",
    `
        - { location: message, role: user }`,
  )}
  - model_name: claude-plain
    litellm_params: { model: anthropic/claude-sonnet-4-5, api_base: "${anthropic.url}", api_key: sk-ant-fake }
`;
  h = await startChatHarness({ upstreamUrl: openai.url, modelList });
});
afterAll(async () => {
  await h?.close();
  await Promise.all([anthropic?.close(), openai?.close()]);
});

async function post(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${h.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${VIRTUAL_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return anthropic.requests.at(-1)?.body as Record<string, unknown>;
}

const conversation = [
  { role: "system", content: "You review contracts." },
  { role: "user", content: "First question" },
  { role: "assistant", content: "First answer" },
  { role: "user", content: [{ type: "text", text: "Second question" }] },
];
const HOUR = { type: "ephemeral", ttl: "1h" };
const DEFAULT = { type: "ephemeral" };

describe("cache_control_injection_points on anthropic/ deployments", () => {
  it("chat completions: the system prompt and the last message get cache_control (index -1 counts from the end)", async () => {
    const sent = await post("/v1/chat/completions", { model: "claude-cached", messages: conversation });
    expect(sent.system).toEqual([{ type: "text", text: "You review contracts.", cache_control: HOUR }]);
    const messages = sent.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(messages.at(-1)?.content).toEqual([
      { type: "text", text: "Second question", cache_control: DEFAULT },
    ]);
    expect(JSON.stringify(messages.slice(0, -1))).not.toContain("cache_control");
  });

  it("/v1/messages: role system marks the system prompt, index -1 the last message's last block", async () => {
    const sent = await post("/v1/messages", {
      model: "claude-cached",
      max_tokens: 64,
      system: "You review contracts.",
      messages: [
        { role: "user", content: "First question" },
        { role: "assistant", content: "First answer" },
        { role: "user", content: "Second question" },
      ],
    });
    expect(sent.system).toEqual([{ type: "text", text: "You review contracts.", cache_control: HOUR }]);
    expect((sent.messages as unknown[]).at(-1)).toEqual({
      role: "user",
      content: [{ type: "text", text: "Second question", cache_control: DEFAULT }],
    });
  });

  it("keeps a client's own cache_control and stops at Anthropic's 4 breakpoints", async () => {
    const own = { type: "ephemeral", ttl: "5m" };
    const messages = [];
    for (let i = 0; i < 6; i++) {
      messages.push(
        { role: "user", content: `question ${i}` },
        { role: "assistant", content: `answer ${i}` },
      );
    }
    messages.push({ role: "user", content: [{ type: "text", text: "last", cache_control: own }] });
    const sent = await post("/v1/messages", { model: "claude-every-user", max_tokens: 64, messages });
    const marked = (sent.messages as Array<{ content: unknown }>).filter((m) =>
      JSON.stringify(m.content).includes("cache_control"),
    );
    expect(marked).toHaveLength(4);
    expect((sent.messages as Array<{ content: unknown }>).at(-1)?.content).toEqual([
      { type: "text", text: "last", cache_control: own },
    ]);
    // The first user messages are marked, in order, until the limit.
    expect((sent.messages as Array<{ content: unknown }>)[0]?.content).toEqual([
      { type: "text", text: "question 0", cache_control: DEFAULT },
    ]);
  });

  it("a deployment without injection points sends the body unchanged", async () => {
    const body = {
      model: "claude-plain",
      max_tokens: 64,
      system: "s",
      messages: [{ role: "user", content: "hi" }],
    };
    await post("/v1/messages", body);
    expect(anthropic.requests.at(-1)?.rawBody).not.toContain("cache_control");
  });
});
