/**
 * `GET /health`: 503 `{"status":"loading"|"failed", …}` until the model is loaded, then 200
 * `{"status":"ok","model","window_tokens"}`. The container health check calls it.
 */
import type { FastifyInstance } from "fastify";
import type { ModelSlot } from "../model/model-slot.js";

export async function healthRoutes(app: FastifyInstance, options: { slot: ModelSlot }): Promise<void> {
  app.get("/health", async (_request, reply) => {
    const { slot } = options;
    const classifier = slot.classifier;
    if (classifier === undefined) {
      return reply
        .code(503)
        .send({ status: slot.state, model: slot.model, ...(slot.error ? { error: slot.error } : {}) });
    }
    return reply.send({ status: "ok", model: classifier.model, window_tokens: classifier.windowTokens });
  });
}
