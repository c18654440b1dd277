/**
 * The semantic cache's embeddings: one `POST /v1/embeddings` (OpenAI's API reference) through the gateway's own
 * router (`router/router.ts`: the embedding alias's deployments, their retries, fallbacks and cooldowns), not
 * through the caller's key. Its cost is the platform's: it is booked to no key, team or user (docs/cache.md).
 */
import type { AbortSource } from "../../router/call-abort.js";
import type { Router } from "../../router/router.js";

/**
 * The embedding of `text` by the model group `model` (an alias whose deployments have `model_info.mode:
 * embedding`): the `data[0].embedding` floats of the answer.
 * @throws the router's GatewayError when every attempt failed, or an Error when the answer has no float vector.
 */
export async function embedText(
  router: Router,
  model: string,
  text: string,
  signal: AbortSource,
): Promise<number[]> {
  const upstream = await router.send(model, { model, input: text, encoding_format: "float" }, signal, {
    api: "embeddings",
  });
  const answer = (await upstream.body.json()) as { data?: { embedding?: unknown }[] };
  const vector = answer.data?.[0]?.embedding;
  if (!Array.isArray(vector) || vector.length === 0 || vector.some((v) => typeof v !== "number"))
    throw new Error(`the embedding model ${model} answered without a float vector`);
  return vector as number[];
}
