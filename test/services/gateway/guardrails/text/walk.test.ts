/**
 * The walk over a request body (`guardrails/text/walk.ts`): every string is a slot and its setter writes back
 * where the string was (nested arrays and objects alike, object keys renamed in place); identifiers and base64 are
 * skipped only when they have that shape; scopes and groups follow the endpoint's rules; a body nested far deeper
 * than the call stack allows is walked.
 */
import { describe, expect, it } from "vitest";
import { chatRequestTexts } from "../../../../../services/gateway/src/endpoints/chat-completions/texts.js";
import { messagesRequestTexts } from "../../../../../services/gateway/src/endpoints/messages/texts.js";
import { responsesRequestTexts } from "../../../../../services/gateway/src/endpoints/responses/texts.js";
import { applyMask } from "../../../../../services/gateway/src/guardrails/pii/pii-guard.js";
import { isBinary, isIdentifier } from "../../../../../services/gateway/src/guardrails/text/walk.js";

const EMAIL = "jane.doe@example.org";
const texts = (slots: Array<{ text: string }>) => slots.map((s) => s.text);

describe("writing back", () => {
  it("each slot's setter writes where its string was, in arrays of arrays and objects inside them", () => {
    const body: Record<string, unknown> = {
      model: "general",
      messages: [{ role: "user", content: "a" }],
      x_rag: [["b", { docs: [{ body: "c" }, "d"] }], { deep: { deeper: ["e"] } }],
    };
    const slots = chatRequestTexts(body);
    expect(texts(slots)).toEqual(["a", "b", "c", "d", "e"]);
    for (const s of slots) s.set(`<${s.text}>`);
    expect(body).toEqual({
      model: "general",
      messages: [{ role: "user", content: "<a>" }],
      x_rag: [["<b>", { docs: [{ body: "<c>" }, "<d>"] }], { deep: { deeper: ["<e>"] } }],
    });
  });

  it("a key holding an e-mail is renamed after its value is masked (rewritten last slot first)", () => {
    const body: Record<string, unknown> = {
      model: "general",
      messages: [{ role: "user", content: "hi" }],
      metadata: { first: 1, [EMAIL]: `reply to ${EMAIL}`, last: 2 },
    };
    const slots = chatRequestTexts(body);
    expect(texts(slots)).toEqual(["hi", EMAIL, `reply to ${EMAIL}`]);
    const at = (text: string) => {
      const start = text.indexOf(EMAIL);
      return [{ entityType: "EMAIL_ADDRESS", start, end: start + EMAIL.length, score: 1 }];
    };
    applyMask(slots, {
      spans: slots.map((s) => (s.text.includes(EMAIL) ? at(s.text) : [])),
      block: [],
      mask: ["EMAIL_ADDRESS"],
    });
    expect(body.metadata).toEqual({ first: 1, "<EMAIL_ADDRESS>": "reply to <EMAIL_ADDRESS>", last: 2 });
    expect(Object.keys(body.metadata as object)).toEqual(["first", "<EMAIL_ADDRESS>", "last"]);
  });

  it("walks a body nested 100,000 levels deep without overflowing the stack", () => {
    let inner: unknown = EMAIL;
    for (let i = 0; i < 100_000; i++) inner = i % 2 === 0 ? [inner] : { n: inner };
    const slots = chatRequestTexts({ model: "m", messages: [], x_deep: inner });
    expect(texts(slots)).toEqual([EMAIL]);
  });
});

describe("what is not text", () => {
  it("an identifier has an identifier's shape; an e-mail, a card, a phone number, an IBAN or prose never has", () => {
    for (const id of [
      "call_abc123",
      "toolu_01A09q90qw90lq9178",
      "auto",
      "image/png",
      "5m",
      "gpt-4o-2024-08-06",
    ]) {
      expect(isIdentifier(id), id).toBe(true);
    }
    for (const text of [
      EMAIL,
      "4111111111111111",
      "4111-1111-1111-1111",
      "+1 555 0100",
      "DE89370400440532013000",
      "two words",
      "",
    ]) {
      expect(isIdentifier(text), text).toBe(false);
    }
  });

  it("base64 is binary in a binary field, a base64 data: URL anywhere; an http URL or short text never", () => {
    const b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB";
    expect(isBinary(b64, true)).toBe(true);
    expect(isBinary(b64, false)).toBe(false);
    expect(isBinary(`data:image/png;base64,${b64}`, false)).toBe(true);
    expect(isBinary(`data:text/plain,${EMAIL}-and-more-text`, false)).toBe(false);
    expect(isBinary(`https://img.example.com/a.png?to=${EMAIL}`, true)).toBe(false);
    expect(isBinary("4111111111111111", true)).toBe(false);
  });

  it("skips identifier-shaped ids, roles and function names, reads the same fields when they hold an e-mail", () => {
    const call = (id: string, name: string) => ({
      model: "general",
      user: id,
      messages: [
        {
          role: "assistant",
          name,
          tool_calls: [{ id, type: "function", function: { name, arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: id, content: "ok" },
      ],
    });
    expect(texts(chatRequestTexts(call("call_1", "lookup")))).toEqual(["lookup", "{}", "ok"]);
    expect(texts(chatRequestTexts(call(EMAIL, EMAIL)))).toEqual([
      EMAIL,
      EMAIL,
      EMAIL,
      EMAIL,
      "{}",
      EMAIL,
      "ok",
    ]);
  });

  it("reads an http image URL and a text document's data, skips base64 images and PDFs", () => {
    const b64 = "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBS";
    const body = {
      model: "claude",
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "url", url: `https://x.example/a.png?u=${EMAIL}` } },
            { type: "image", source: { type: "base64", media_type: "image/png", data: b64 } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64 } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "notes" } },
          ],
        },
      ],
    };
    expect(texts(messagesRequestTexts(body))).toEqual([`https://x.example/a.png?u=${EMAIL}`, "notes"]);
  });
});

describe("scopes and groups", () => {
  it("Responses: instructions as system, each item a group, calls as tool_call, outputs as tool, the rest request", () => {
    const body = {
      model: "general",
      instructions: "I",
      input: [
        { role: "user", content: [{ type: "input_text", text: "U" }] },
        { type: "function_call", call_id: "c1", name: "f", arguments: "A", x_note: "N" },
        { type: "function_call_output", call_id: "c1", output: "O" },
      ],
      reasoning: { effort: "low", summary: EMAIL },
    };
    expect(responsesRequestTexts(body).map((s) => [s.scope, s.group, s.text])).toEqual([
      ["system", -1, "I"],
      ["user", 0, "U"],
      ["tool_call", 1, "A"],
      ["tool_call", 1, "N"],
      ["tool", 2, "O"],
      ["request", -1, EMAIL],
    ]);
  });

  it("Messages: system, each message in its role, a tool_use block's input as tool_call", () => {
    const body = {
      model: "claude",
      system: [{ type: "text", text: "S" }],
      messages: [
        { role: "user", content: "U" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: { q: "Q" } }] },
      ],
      mcp_servers: [{ type: "url", url: "https://mcp.example/sse", name: "crm" }],
    };
    expect(messagesRequestTexts(body).map((s) => [s.scope, s.group, s.text])).toEqual([
      ["system", -1, "S"],
      ["user", 0, "U"],
      ["tool_call", 1, "Q"],
      ["request", -1, "https://mcp.example/sse"],
    ]);
  });

  it("skips a base64 payload of megabytes without holding the stack (a PDF, an image data: URL)", () => {
    // 6 MiB of base64: a backtracking pattern over it overflowed the stack (RangeError, a 500 for the client).
    const b64 = "JVBERi0xLjQK".repeat(512 * 1024);
    const body = {
      model: "claude",
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64 } },
            { type: "image", source: { type: "url", url: `data:image/png;base64,${b64}` } },
            { type: "text", text: EMAIL },
          ],
        },
      ],
    };
    expect(texts(messagesRequestTexts(body))).toEqual([EMAIL]);
  });
});
