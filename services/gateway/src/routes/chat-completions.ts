/**
 * `POST /v1/chat/completions` (and `/chat/completions`): OpenAI's chat completions API in front of the
 * registered deployments. The handler is the list of steps under `chat/steps/`: parse → resolve → authorize →
 * admit → guard input → send → answer (which settles through the account step). A refusal or failure after
 * admit releases the budget reservation (a settled one is not touched: an admission finishes once).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CallContext, ChatDeps } from "../chat/context.js";
import { type CallObserver, type ChatGuard, observerHeaders } from "../chat/hooks.js";
import { clientLeft, finish } from "../chat/steps/account.js";
import { admit } from "../chat/steps/admit.js";
import { answerJson, answerStream, decisionHeaders } from "../chat/steps/answer.js";
import { authorize } from "../chat/steps/authorize.js";
import { guardInput } from "../chat/steps/guard-input.js";
import { parse } from "../chat/steps/parse.js";
import { resolve } from "../chat/steps/resolve.js";
import { send } from "../chat/steps/send.js";
import type { Admitter } from "../limits/types.js";
import type { GatewayMetrics } from "../metrics/metrics.js";
import type { Router } from "../router/router.js";
import type { SpendRecorder } from "../spend/types.js";
import type { Clock } from "../time/clock.js";

export interface ChatCompletionsOptions {
  router: Router;
  metrics: GatewayMetrics;
  clock: Clock;
  admitter: Admitter | undefined;
  spend: SpendRecorder | undefined;
  /** Guardrails (see `chat/hooks.ts`); none when undefined. */
  guard?: ChatGuard | undefined;
  /** Told about every finished call, after the response. */
  observers?: readonly CallObserver[] | undefined;
  /** A stream is ended after this long, ms (0: never; default 30 minutes). */
  maxStreamDurationMs?: number | undefined;
}

export async function chatCompletionsRoutes(
  app: FastifyInstance,
  options: ChatCompletionsOptions,
): Promise<void> {
  const deps: ChatDeps = {
    router: options.router,
    metrics: options.metrics,
    clock: options.clock,
    admitter: options.admitter,
    spend: options.spend,
    guard: options.guard,
    observers: options.observers ?? [],
    collectOutput: (options.observers ?? []).some((o) => o.wantsOutput === true),
    log: app.log,
    ...(options.maxStreamDurationMs === undefined
      ? {}
      : { maxStreamDurationMs: options.maxStreamDurationMs }),
  };
  app.decorateRequest("countedByHandler", false);
  app.decorateRequest("chatCall", undefined);

  async function handler(request: FastifyRequest, reply: FastifyReply) {
    const call = parse(request, reply, deps.clock);
    request.chatCall = call;
    // Observers' headers (x-trace-id) go on every answer from here on, refusals included.
    reply.headers(observerHeaders(deps.observers, call));
    resolve(call, deps.router);
    authorize(call);
    await admit(call, deps.admitter);
    try {
      return await afterAdmission(call, request, reply);
    } catch (error) {
      call.admission?.release();
      if (call.abort.aborted) return clientLeft(deps, request, reply);
      if (!reply.sent) reply.headers(decisionHeaders(call.decisions));
      throw error;
    }
  }

  async function afterAdmission(call: CallContext, request: FastifyRequest, reply: FastifyReply) {
    await guardInput(call, deps.guard);
    const upstream = await send(call, deps.router);
    if (!call.stream) return answerJson(call, upstream, deps, reply);
    await answerStream(call, upstream, deps, request, reply);
  }

  // Streams and abandoned calls are counted by the handler; everything else here.
  app.addHook("onResponse", async (request, reply) => {
    if (!request.countedByHandler) finish(deps, request, reply.statusCode, request.errorType);
  });

  for (const url of ["/v1/chat/completions", "/chat/completions"]) {
    // The chat's service key books each call on the chat user it names (`users/attribution.ts`).
    app.post(url, { config: { userAttribution: true } }, handler);
  }
}
