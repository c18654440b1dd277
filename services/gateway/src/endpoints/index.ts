/**
 * The model endpoints the gateway serves, each in its own folder (an {@link Endpoint} description), and the
 * fastify plugin that registers them on the pipeline. Adding an endpoint: a folder here and one line in
 * {@link endpoints} (see `docs/architecture.md`).
 */
import type { FastifyInstance } from "fastify";
import type { Endpoint } from "../pipeline/endpoint.js";
import { pipelineHooks, pipelineRoute } from "../pipeline/route.js";
import type { PipelineDeps } from "../pipeline/types.js";
import { chatCompletions } from "./chat-completions/index.js";
import { completions } from "./completions/index.js";
import { embeddings } from "./embeddings/index.js";
import { countTokensRoute } from "./messages/count-tokens.js";
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
];

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
  countTokensRoute(app, deps.router);
  storedResponseRoutes(app);
}
