/**
 * Micro-benchmark of the guardrails' text extraction (`npx tsx bench/micro/guardrail-texts.ts`), side by side in
 * one run: the per-field extractors before issue 28 (`endpoints/chat-completions/texts.ts` and
 * `endpoints/responses/texts.ts` at commit 1dbcdc9, read from git: hand-written lists of known fields) and today's
 * walk over the whole body (`guardrails/text/walk.ts` under each endpoint's rules), alone and followed by
 * `normalizeForDetection` of every text (what the PII guardrail does per call). Chat requests: an ASCII turn, the
 * same with tools and a response_format schema, a non-ASCII turn that normalisation leaves unchanged, one with
 * fullwidth and zero-width characters (the mapped path); and a Responses request with a function call round trip.
 * Prints µs per call and the ratio walk ÷ before, 3 rounds.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { chatRequestTexts } from "../../services/gateway/src/endpoints/chat-completions/texts.js";
import { responsesRequestTexts } from "../../services/gateway/src/endpoints/responses/texts.js";
import { normalizeForDetection } from "../../services/gateway/src/guardrails/text/normalize.js";

type Extract = (body: Record<string, unknown>) => Array<{ text: string }>;

const BEFORE = "1dbcdc9";
const dir = mkdtempSync(join(tmpdir(), "bench-texts-"));
/** Writes `path` as it was at {@link BEFORE} under `dir` (keeping its relative imports working). */
const checkout = (path: string): string => {
  const file = join(dir, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, execFileSync("git", ["show", `${BEFORE}:${path}`], { encoding: "utf8" }));
  return pathToFileURL(file).href;
};
checkout("services/gateway/src/guardrails/text/slots.ts");
const oldChat = (await import(checkout("services/gateway/src/endpoints/chat-completions/texts.ts"))) as {
  chatRequestTexts: Extract;
};
const oldResponses = (await import(checkout("services/gateway/src/endpoints/responses/texts.ts"))) as {
  responsesRequestTexts: Extract;
};

const prose = "Please summarise the attached meeting notes and list the action items with owners. ".repeat(3);
const turn = (text: string) => [
  { role: "system", content: "You are a helpful assistant for the platform team." },
  { role: "user", content: text },
  { role: "assistant", content: "Here is the summary you asked for, with the owners named." },
  { role: "user", content: [{ type: "text", text: `${text} Reply to jane.doe@example.org.` }] },
];
const tools = [
  {
    type: "function",
    function: {
      name: "lookup",
      description: "Look up an order by its number.",
      parameters: {
        type: "object",
        properties: { order: { type: "string", description: "The order number" } },
        required: ["order"],
      },
    },
  },
];
const responseFormat = {
  type: "json_schema",
  json_schema: {
    name: "summary",
    schema: { type: "object", properties: { items: { type: "array", description: "Action items" } } },
  },
};
const responsesBody = {
  model: "general",
  instructions: "You are a helpful assistant for the platform team.",
  input: [
    { role: "user", content: [{ type: "input_text", text: prose }] },
    { type: "function_call", call_id: "call_1", name: "lookup", arguments: '{"order":"A-1001"}' },
    { type: "function_call_output", call_id: "call_1", output: "Order A-1001 shipped on Monday." },
    { role: "user", content: [{ type: "input_text", text: "Reply to jane.doe@example.org." }] },
  ],
  tools: [
    {
      type: "function",
      name: "lookup",
      description: "Look up an order.",
      parameters: tools[0]?.function.parameters,
    },
  ],
  reasoning: { effort: "low" },
  store: false,
};
const cases: Array<[string, Record<string, unknown>, Extract, Extract]> = [
  [
    "ASCII chat turn (4 messages, ~1 KB)",
    { model: "general", messages: turn(prose) },
    oldChat.chatRequestTexts,
    chatRequestTexts,
  ],
  [
    "same + tools and response_format",
    { model: "general", messages: turn(prose), tools, response_format: responseFormat },
    oldChat.chatRequestTexts,
    chatRequestTexts,
  ],
  [
    "non-ASCII, already normal",
    {
      model: "general",
      messages: turn(`Bitte fasse die Notizen zusammen — 会議のメモを要約してください。 ${prose}`),
    },
    oldChat.chatRequestTexts,
    chatRequestTexts,
  ],
  [
    "fullwidth and zero-width characters",
    { model: "general", messages: turn(`Ｐｌｅａｓｅ\u200b ｓｕｍｍａｒｉｓｅ\u2060 ${prose}`) },
    oldChat.chatRequestTexts,
    chatRequestTexts,
  ],
  [
    "Responses: function call round trip",
    responsesBody,
    oldResponses.responsesRequestTexts,
    responsesRequestTexts,
  ],
];

let sink = 0;
const N = 100_000;
const time = (fn: () => number): number => {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += fn();
  return Number(process.hrtime.bigint() - t0) / N / 1000;
};
for (let round = 1; round <= 3; round++) {
  console.log(`round ${round} (µs per call)`);
  for (const [name, body, before, walk] of cases) {
    const old = time(() => before(body).length);
    const now = time(() => walk(body).length);
    const normalised = time(() => {
      let n = 0;
      for (const s of walk(body)) n += normalizeForDetection(s.text).text.length;
      return n;
    });
    console.log(
      `  ${name.padEnd(38)} before ${old.toFixed(2)}  walk ${now.toFixed(2)} (${(now / old).toFixed(2)}×)  walk+normalise ${normalised.toFixed(2)}`,
    );
  }
}
if (sink === 0) console.log("(nothing extracted)");
