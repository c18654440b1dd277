/**
 * Every string-typed field of the published request shapes is read by the input guardrails: for each path of
 * OpenAI's `CreateChatCompletionRequest`, `CreateResponse`, `CreateCompletionRequest` and `CreateEmbeddingRequest`
 * (OpenAI's OpenAPI description, `test/fixtures/openai-openapi-schemas.json`) and of Anthropic's Messages request
 * (`test/fixtures/anthropic-messages-request-schema.ts`), a body with an e-mail address and a card number at that
 * path gives a slot holding them, unless the path's top-level field is in the endpoint's documented `skip` list.
 */
import { describe, expect, it } from "vitest";
import {
  CHAT_TEXT_RULES,
  chatRequestTexts,
} from "../../../../../services/gateway/src/endpoints/chat-completions/texts.js";
import {
  COMPLETION_TEXT_RULES,
  completionRequestTexts,
} from "../../../../../services/gateway/src/endpoints/completions/texts.js";
import {
  EMBEDDING_TEXT_RULES,
  embeddingInputTexts,
} from "../../../../../services/gateway/src/endpoints/embeddings/texts.js";
import {
  MESSAGES_TEXT_RULES,
  messagesRequestTexts,
} from "../../../../../services/gateway/src/endpoints/messages/texts.js";
import {
  RESPONSES_TEXT_RULES,
  responsesRequestTexts,
} from "../../../../../services/gateway/src/endpoints/responses/texts.js";
import type { TextSlot } from "../../../../../services/gateway/src/guardrails/text/slots.js";
import type { TextRules } from "../../../../../services/gateway/src/guardrails/text/walk.js";
import {
  anthropicMessagesRequestSchema,
  resolveAnthropicRef,
} from "../../../../fixtures/anthropic-messages-request-schema.js";
import { openAISchema, resolveOpenAIRef } from "../../../../helpers/openapi.js";
import { bodyWith, pathName, stringPaths } from "../../../../helpers/schema-paths.js";

const PII = "mail jane.doe@example.org card 4111 1111 1111 1111";

interface Case {
  name: string;
  schema: Record<string, unknown>;
  resolve: (ref: string) => Record<string, unknown>;
  extract: (body: Record<string, unknown>) => TextSlot[];
  rules: TextRules;
  /** Fewest paths the shape must yield (so the test cannot pass on an empty walk). */
  atLeast: number;
}

const openai = (name: string, extract: Case["extract"], rules: TextRules, atLeast: number): Case => ({
  name,
  schema: openAISchema(name),
  resolve: resolveOpenAIRef,
  extract,
  rules,
  atLeast,
});

const cases: Case[] = [
  openai("CreateChatCompletionRequest", chatRequestTexts, CHAT_TEXT_RULES, 60),
  openai("CreateResponse", responsesRequestTexts, RESPONSES_TEXT_RULES, 200),
  openai("CreateCompletionRequest", completionRequestTexts, COMPLETION_TEXT_RULES, 4),
  openai("CreateEmbeddingRequest", embeddingInputTexts, EMBEDDING_TEXT_RULES, 3),
  {
    name: "Anthropic Messages request",
    schema: anthropicMessagesRequestSchema,
    resolve: resolveAnthropicRef,
    extract: messagesRequestTexts,
    rules: MESSAGES_TEXT_RULES,
    atLeast: 60,
  },
];

describe("every string field of the published request shapes is a slot", () => {
  for (const c of cases) {
    it(c.name, () => {
      const paths = stringPaths(c.schema, c.resolve);
      expect(paths.length).toBeGreaterThanOrEqual(c.atLeast);
      const unread: string[] = [];
      for (const path of paths) {
        const top = path[0]?.key;
        if (typeof top === "string" && c.rules.skip.has(top)) continue;
        const body = bodyWith(path, PII, top === "model" ? {} : { model: "m" });
        const slots = c.extract(body);
        if (!slots.some((s) => s.text.includes(PII))) unread.push(pathName(path));
      }
      expect(unread).toEqual([]);
    });
  }

  it("the skipped top-level fields are only those the gateway never sends upstream as written", () => {
    for (const rules of [CHAT_TEXT_RULES, RESPONSES_TEXT_RULES, MESSAGES_TEXT_RULES, EMBEDDING_TEXT_RULES]) {
      expect([...rules.skip].every((f) => ["model", "tags", "logit_bias"].includes(f))).toBe(true);
    }
  });
});
