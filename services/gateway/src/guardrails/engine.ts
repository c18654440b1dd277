/**
 * The guardrail engine: the pipeline's `CallGuard`, for every endpoint (each hands it its own text extractor). Input (pre_call): PII and prompt injection run in
 * parallel on the request; output (post_call): PII on the answer, or on the stream through a
 * StreamOutputGuard. Every decision is counted in the metrics and returned for the response headers and the
 * trace; a refusal is thrown as a GuardrailRefusal that carries the decisions.
 */

import { inspectInjection } from "./injection/injection-guard.js";
import type { InjectionScanner } from "./injection/scanner-client.js";
import type { GuardrailMetrics } from "./metrics.js";
import type { PiiAnalyzer } from "./pii/analyzer.js";
import { applyMask, inspectPii } from "./pii/pii-guard.js";
import { effectiveMode } from "./policy/key-overrides.js";
import type { GuardMode, GuardrailPolicy, PiiPolicy } from "./policy/schema.js";
import { firstRefusal, type Refusal } from "./refusals.js";
import { createStreamOutputGuard } from "./stream-output.js";
import type { TextSlot } from "./text/slots.js";
import type { CallGuard, GuardCall, GuardDecision, GuardOutcome, StreamOutputGuard } from "./types.js";

/** What the engine runs on. */
export interface GuardrailEngineDeps {
  policy: GuardrailPolicy;
  /** Presidio's REST analyzer, or the built-in recognizers. */
  analyzer: PiiAnalyzer;
  /** Undefined when GUARD_SCANNER_API_BASE is unset (prompt_injection then follows its on_error). */
  scanner: InjectionScanner | undefined;
  metrics: GuardrailMetrics;
}

const defined = <T>(v: T | undefined): v is T => v !== undefined;

/** Replaces each object or array field of `body` by a deep copy, so rewriting it leaves the client's body as sent. */
function detach(body: Record<string, unknown>): void {
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (typeof value === "object" && value !== null) body[key] = structuredClone(value);
  }
}

/**
 * Throws the first refusal; its decisions are added to the call's first (the chat route adds a hook's decisions
 * only when the hook returns), so the refused response's headers and the observers see them.
 */
function refuseIfAny(
  call: GuardCall,
  refusals: ReadonlyArray<Refusal | undefined>,
  decisions: GuardDecision[],
): void {
  const refusal = firstRefusal(refusals, decisions);
  if (refusal === undefined) return;
  call.decisions.push(...decisions);
  throw refusal;
}

/** Implements {@link CallGuard} for a policy. */
export class GuardrailEngine implements CallGuard {
  private readonly policy: GuardrailPolicy;
  private readonly analyzer: PiiAnalyzer;
  private readonly scanner: InjectionScanner | undefined;
  private readonly metrics: GuardrailMetrics;

  constructor(deps: GuardrailEngineDeps) {
    this.policy = deps.policy;
    this.analyzer = deps.analyzer;
    this.scanner = deps.scanner;
    this.metrics = deps.metrics;
  }

  /** The guardrail names a key's `metadata.guardrails` may name. */
  get names(): string[] {
    return [this.policy.pii?.name, this.policy.promptInjection?.name].filter(defined);
  }

  /** Every text of the call's body that `texts` (the endpoint's extractor) finds; see {@link checkRequest}. */
  checkInput(call: GuardCall, texts: (body: Record<string, unknown>) => TextSlot[]): Promise<GuardOutcome> {
    return this.checkRequest(call, texts);
  }

  /**
   * The input check of any endpoint: `extract` lists every text a model reads in `call.body` (an endpoint's
   * extractor, built from `text/slots.ts`). The PII guardrail reads every slot, the prompt-injection guardrail
   * the slots of its scopes. When masking, the body's fields are first copied (the client's parsed body, which
   * traces may record, is not changed) and the texts extracted again from the copy, which is then rewritten.
   * @throws GuardrailRefusal on a block, or when a fail_closed guardrail's service fails.
   */
  async checkRequest(
    call: GuardCall,
    extract: (body: Record<string, unknown>) => TextSlot[],
  ): Promise<GuardOutcome> {
    const { pii, promptInjection: injection } = this.policy;
    const piiMode = this.piiMode(call, "input");
    const injectionMode = injection
      ? effectiveMode(injection.name, injection.mode, call.auth.metadata)
      : "off";
    const piiOn = pii !== undefined && piiMode !== "off";
    const injectionOn = injection !== undefined && injectionMode !== "off";
    const slots = piiOn || injectionOn ? extract(call.body) : [];
    const [piiVerdict, injectionVerdict] = await Promise.all([
      piiOn
        ? inspectPii(
            pii,
            this.analyzer,
            slots.map((s) => s.text),
            "pre_call",
            piiMode,
          )
        : undefined,
      injectionOn ? inspectInjection(injection, this.scanner, slots, injectionMode) : undefined,
    ]);
    const decisions = this.record([piiVerdict?.decision, injectionVerdict?.decision]);
    refuseIfAny(call, [piiVerdict?.refusal, injectionVerdict?.refusal], decisions);
    if (piiMode === "enforce" && piiVerdict?.decision.action === "mask" && piiVerdict.findings) {
      detach(call.body);
      applyMask(extract(call.body), piiVerdict.findings);
      return { decisions, rewritten: true };
    }
    return { decisions, rewritten: false };
  }

  /** PII on a non-streamed answer's texts (`texts`: the endpoint's extractor of model-written text). */
  async checkOutput(
    call: GuardCall,
    completion: unknown,
    texts: (answer: Record<string, unknown>) => TextSlot[],
  ): Promise<GuardOutcome> {
    const pii = this.policy.pii;
    const mode = this.piiMode(call, "output");
    if (pii === undefined || mode === "off") return { decisions: [] };
    const slots =
      typeof completion === "object" && completion !== null
        ? texts(completion as Record<string, unknown>)
        : [];
    const verdict = await inspectPii(
      pii,
      this.analyzer,
      slots.map((s) => s.text),
      "post_call",
      mode,
    );
    const decisions = this.record([verdict.decision]);
    refuseIfAny(call, [verdict.refusal], decisions);
    if (mode === "enforce" && verdict.decision.action === "mask" && verdict.findings) {
      applyMask(slots, verdict.findings);
      return { decisions, rewritten: true };
    }
    return { decisions };
  }

  streamOutput(call: GuardCall): StreamOutputGuard | undefined {
    const pii = this.policy.pii;
    const mode = this.piiMode(call, "output");
    if (pii === undefined || mode === "off") return undefined;
    return createStreamOutputGuard({
      policy: pii,
      analyzer: this.analyzer,
      mode,
      record: (d) => this.metrics.record(d),
    });
  }

  /** The PII guardrail's mode for this call on one side ("off" when its scope excludes that side). */
  private piiMode(call: GuardCall, side: "input" | "output"): GuardMode {
    const pii: PiiPolicy | undefined = this.policy.pii;
    if (pii === undefined || (pii.scope !== "both" && pii.scope !== side)) return "off";
    return effectiveMode(pii.name, pii.mode, call.auth.metadata);
  }

  private record(decisions: ReadonlyArray<GuardDecision | undefined>): GuardDecision[] {
    const made = decisions.filter(defined);
    for (const d of made) this.metrics.record(d);
    return made;
  }
}
