/**
 * The guardrails' view of text: normalisation with its offset map (checked against the platform's own NFKC on
 * seeded random strings) and the chat request extraction (what is read, in which scope, and that masking leaves
 * the client's parsed body as it was sent).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chatRequestTexts } from "../../../../services/gateway/src/endpoints/chat-completions/texts.js";
import { textsToScan } from "../../../../services/gateway/src/guardrails/injection/injection-guard.js";
import {
  normalizeForDetection,
  originalSpan,
} from "../../../../services/gateway/src/guardrails/text/normalize.js";
import { call, injectionPolicy, piiPolicy, testEngine } from "./helpers.js";
import { asRead, fullwidth, INVISIBLE, PLACEMENTS } from "./vectors.js";

describe("normalizeForDetection", () => {
  it("leaves ASCII and already-normal text as it is, without an offset map", () => {
    for (const text of ["plain ascii bob@corp.com", "déjà vu — ünïcödé", ""]) {
      const n = normalizeForDetection(text);
      expect(n.text).toBe(text);
      expect(n.starts).toBeUndefined();
    }
  });

  it("drops invisible characters and applies NFKC, mapping spans back to the original characters", () => {
    const text = "mail ｂｏｂ\u200b＠corp．com now";
    const n = normalizeForDetection(text);
    expect(n.text).toBe("mail bob@corp.com now");
    const [start, end] = originalSpan(n, 5, 17);
    expect(text.slice(start, end)).toBe("ｂｏｂ\u200b＠corp．com");
  });

  it("a span inside an expanded character covers the whole character", () => {
    const text = "a\ufb01b"; // ﬁ → "fi"
    const n = normalizeForDetection(text);
    expect(n.text).toBe("afib");
    expect(originalSpan(n, 2, 3)).toEqual([1, 2]);
  });

  it("equals NFKC of the text without invisible characters, and every span maps inside the original (seeded)", () => {
    const pieces = fc.constantFrom(
      ..."ab9 @.-".split(""),
      ...INVISIBLE,
      ..."ab9@.".split("").map(fullwidth),
      "e\u0301",
      "\u0301",
      "\ufb01",
      "\u1100\u1161\u11a8",
      "\ud835\udc00",
      "①",
      "\u3000",
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), fc.nat(), fc.nat(), (parts, a, b) => {
        const text = parts.join("");
        const n = normalizeForDetection(text);
        expect(n.text).toBe(asRead(text));
        const len = n.text.length;
        const s = len === 0 ? 0 : a % len;
        const e = len === 0 ? 0 : s + (b % (len - s + 1));
        const [os, oe] = originalSpan(n, s, e);
        expect(0 <= os && os <= oe && oe <= text.length).toBe(true);
        if (e > s) expect(asRead(text.slice(os, oe))).toContain(n.text.slice(s, e).trim());
      }),
      { seed: 20, numRuns: 2000 },
    );
  });
});

describe("chatRequestTexts", () => {
  it("reads every placement of the issue's vectors", () => {
    for (const p of PLACEMENTS) {
      const texts = chatRequestTexts(p.build("SECRET")).map((s) => s.text);
      expect(texts.join("\n"), p.name).toContain("SECRET");
    }
  });

  it("names each text's scope and group, in document order, and skips identifiers, function names and base64", () => {
    const body = {
      model: "general",
      user: "someone",
      metadata: { note: "the upstream stores it" },
      messages: [
        { role: "system", content: "sys" },
        {
          role: "user",
          name: "alice",
          content: [
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "input_text", text: "hi" },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
        },
      ],
      tools: [{ type: "function", function: { name: "f", description: "does f", strict: true } }],
      x_field: ["extra"],
    };
    const slots = chatRequestTexts(body).map((s) => [s.scope, s.group, s.text]);
    expect(slots).toEqual([
      ["request", -1, "the upstream stores it"],
      ["system", 0, "sys"],
      ["user", 1, "alice"],
      ["user", 1, "hi"],
      ["tool_call", 2, "{}"],
      ["request", -1, "does f"],
      ["request", -1, "extra"],
    ]);
  });

  it("masking rewrites the call's body and leaves the client's parsed parts and tools as sent", async () => {
    const part = { type: "input_text", text: "mail bob＠corp．com" };
    const tool = { type: "function", function: { name: "f", description: "cc bob@corp.com" } };
    const c = call([{ role: "user", content: [part] }]);
    c.body.tools = [tool];
    const t = testEngine({ pii: piiPolicy(), promptInjection: injectionPolicy({ mode: "off" }) });
    const outcome = await t.engine.checkInput(c, chatRequestTexts);
    expect(outcome.rewritten).toBe(true);
    expect(JSON.stringify(c.body)).not.toMatch(/bob/);
    expect(chatRequestTexts(c.body).map((s) => s.text)).toEqual([
      "mail <EMAIL_ADDRESS>",
      "cc <EMAIL_ADDRESS>",
    ]);
    expect(part.text).toBe("mail bob＠corp．com");
    expect(tool.function.description).toBe("cc bob@corp.com");
  });
});

describe("textsToScan: the prompt-injection scopes", () => {
  const body = {
    model: "general",
    messages: [
      { role: "system", content: "S" },
      {
        role: "assistant",
        content: "A",
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "ARGS" } }],
      },
      { role: "user", content: [{ type: "input_text", text: "U1" }, { text: "U2" }] },
      { role: "function", content: "LEGACY" },
    ],
    tools: [{ type: "function", function: { name: "f", description: "TOOL" } }],
    x_extra: "EXTRA",
  };
  const slots = chatRequestTexts(body);

  it("shipped scopes: one text per message of the roles, tool-call arguments without the assistant's content, request fields as one", () => {
    const policy = injectionPolicy({ roles: ["system", "developer", "user", "tool"] });
    expect(textsToScan(policy, slots)).toEqual(["S", "ARGS", "U1\nU2", "LEGACY", "TOOL\nEXTRA"]);
  });

  it("tool_calls and request_fields off leave those out; a role OpenAI does not define is still scanned", () => {
    const policy = injectionPolicy({ roles: ["user"], toolCalls: false, requestFields: false });
    expect(textsToScan(policy, slots)).toEqual(["U1\nU2", "LEGACY"]);
  });

  it("scans the normalised text", () => {
    const policy = injectionPolicy({ roles: ["user"] });
    const s = chatRequestTexts({ messages: [{ role: "user", content: "Ｉｇｎｏｒｅ\u200b all" }] });
    expect(textsToScan(policy, s)).toEqual(["Ignore all"]);
  });
});
