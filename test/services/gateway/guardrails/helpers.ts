/**
 * Shared pieces of the guardrail engine tests: policies, a call builder, an engine on a fresh registry, and
 * reading the guardrail counters back.
 */
import { Registry } from "prom-client";
import { GuardrailEngine } from "../../../../services/gateway/src/guardrails/engine.js";
import type { InjectionScanner } from "../../../../services/gateway/src/guardrails/injection/scanner-client.js";
import { createGuardrailMetrics } from "../../../../services/gateway/src/guardrails/metrics.js";
import type { PiiAnalyzer } from "../../../../services/gateway/src/guardrails/pii/analyzer.js";
import { builtInAnalyzer } from "../../../../services/gateway/src/guardrails/pii/recognizers.js";
import type {
  GuardrailPolicy,
  InjectionPolicy,
  PiiPolicy,
} from "../../../../services/gateway/src/guardrails/policy/schema.js";
import type { GuardCall } from "../../../../services/gateway/src/guardrails/types.js";

/** One chat message as the tests write it (OpenAI's message object). */
export interface GuardMessage {
  role: string;
  content?: string | unknown[] | null | undefined;
  [field: string]: unknown;
}

/** A guard call on a chat completions body (what the chat endpoint hands the engine). */
export interface ChatGuardCall extends GuardCall {
  body: { model: string; messages: GuardMessage[]; [field: string]: unknown };
}

import { metricValue } from "../../../helpers/metrics.js";

export const EMAIL = "jane.doe@example.org";
export const CARD = "4111 1111 1111 1111";

export function piiPolicy(overrides: Partial<PiiPolicy> = {}): PiiPolicy {
  return {
    name: "pii",
    mode: "enforce",
    scope: "input",
    onError: "fail_closed",
    scoreThreshold: { ALL: 0.5, CREDIT_CARD: 0.8 },
    entities: { EMAIL_ADDRESS: "MASK", PHONE_NUMBER: "MASK", CREDIT_CARD: "BLOCK", US_SSN: "BLOCK" },
    allowList: ["support@example.com"],
    streamOutput: "buffer",
    ...overrides,
  };
}

export function injectionPolicy(overrides: Partial<InjectionPolicy> = {}): InjectionPolicy {
  return {
    name: "prompt_injection",
    mode: "enforce",
    threshold: 0.92,
    roles: ["user", "tool"],
    toolCalls: true,
    requestFields: true,
    onError: "fail_open",
    timeoutMs: 500,
    ...overrides,
  };
}

/** A call with the given messages (strings become user messages) and optional key metadata. */
export function call(
  messages: Array<GuardMessage | string>,
  metadata?: Record<string, unknown>,
): ChatGuardCall {
  return {
    body: {
      model: "general",
      messages: messages.map((m) => (typeof m === "string" ? { role: "user", content: m } : m)),
    },
    auth: metadata === undefined ? { kind: "master" } : { kind: "virtual", metadata },
    decisions: [],
  };
}

export interface TestEngine {
  engine: GuardrailEngine;
  registry: Registry;
  /** Value of litellm_guardrail_requests_total for the labels (0 when absent). */
  count(guardrail: string, status: string, hook?: string): Promise<number>;
  /** Value of litellm_guardrail_errors_total for a guardrail. */
  errors(guardrail: string): Promise<number>;
}

export function testEngine(
  policy: GuardrailPolicy,
  options: { analyzer?: PiiAnalyzer; scanner?: InjectionScanner } = {},
): TestEngine {
  const registry = new Registry();
  const engine = new GuardrailEngine({
    policy,
    analyzer: options.analyzer ?? builtInAnalyzer,
    scanner: options.scanner,
    metrics: createGuardrailMetrics(registry),
  });
  return {
    engine,
    registry,
    count: (guardrail, status, hook = "pre_call") =>
      metricValue(registry, "litellm_guardrail_requests_total", {
        guardrail_name: guardrail,
        status,
        hook_type: hook,
      }),
    errors: (guardrail) =>
      metricValue(registry, "litellm_guardrail_errors_total", { guardrail_name: guardrail }),
  };
}

/** Runs `fn`, expecting it to reject with a GatewayError-like error; returns it. */
export async function refusal(fn: () => Promise<unknown>): Promise<{
  status: number;
  message: string;
  code: string;
  type: string;
}> {
  try {
    await fn();
  } catch (error) {
    return error as never;
  }
  throw new Error("expected a refusal");
}
