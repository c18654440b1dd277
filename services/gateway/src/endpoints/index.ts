/**
 * The model endpoints the gateway serves, each in its own folder (an {@link Endpoint} description), and the
 * fastify plugin that registers them on the pipeline. Adding an endpoint: a folder here and one line in
 * {@link endpoints} (see `docs/architecture.md`). A route registered here that does not run the pipeline is
 * listed, with why, in {@link offPipelineRoutes} (a layout test refuses any other).
 */
import type { FastifyInstance } from "fastify";
import type { Endpoint } from "../pipeline/endpoint.js";
import { pipelineHooks, pipelineRoute } from "../pipeline/route.js";
import type { PipelineDeps } from "../pipeline/types.js";
import { chatCompletions } from "./chat-completions/index.js";
import { completions } from "./completions/index.js";
import { embeddings } from "./embeddings/index.js";
import { countTokens } from "./messages/count-tokens.js";
import { messages } from "./messages/index.js";
import { responses } from "./responses/index.js";
import { storedResponseRoutes } from "./responses/stored.js";

/** Every model endpoint, in registration order. */
// biome-ignore lint/suspicious/noExplicitAny: each endpoint has its own body type; the list holds them all.
export const endpoints: ReadonlyArray<Endpoint<any>> = [
  chatCompletions,
  responses,
  embeddings,
  completions,
  messages,
  countTokens,
];

/** A route registered by {@link modelRoutes} that does not run the pipeline, and why that is safe. */
export interface OffPipelineRoute {
  method: "GET" | "POST" | "DELETE";
  url: string;
  why: string;
}

const STORED_RESPONSE_WHY =
  "No model call: reads, deletes or cancels a response a native upstream stored. Answered only for the key that created it (ownership checked, responses/stored.ts), at the deployment that holds it; counted against the key's rate limits.";

/**
 * Every route under `endpoints/` that does not go through the pipeline (so skips its limits, guardrails and
 * request counters), each with why. Nothing else may be registered beside the pipeline: the layout test
 * (`test/services/gateway/layout/side-doors.test.ts`) fails on a route that is neither a pipeline route nor here.
 */
export const offPipelineRoutes: readonly OffPipelineRoute[] = ["/v1/responses", "/responses"].flatMap(
  (base) => [
    { method: "GET", url: `${base}/:id`, why: STORED_RESPONSE_WHY },
    { method: "DELETE", url: `${base}/:id`, why: STORED_RESPONSE_WHY },
    { method: "GET", url: `${base}/:id/input_items`, why: STORED_RESPONSE_WHY },
    { method: "POST", url: `${base}/:id/cancel`, why: STORED_RESPONSE_WHY },
  ],
);

/** Options of {@link modelRoutes}: the pipeline's dependencies, without the app's logger (taken from the app). */
export type ModelRoutesOptions = Omit<PipelineDeps, "log" | "collectOutput">;

/** Registers every model endpoint and the pipeline's request counting. */
export async function modelRoutes(app: FastifyInstance, options: ModelRoutesOptions): Promise<void> {
  const deps: PipelineDeps = {
    ...options,
    collectOutput: options.observers.some((o) => o.wantsOutput === true),
    log: app.log,
  };
  pipelineHooks(app, deps);
  for (const endpoint of endpoints) pipelineRoute(app, endpoint, deps);
  storedResponseRoutes(app, deps);
}
