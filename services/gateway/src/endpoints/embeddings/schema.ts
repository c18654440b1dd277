/**
 * The embeddings request (OpenAI API reference, "Create embeddings", `CreateEmbeddingRequest`): `input` as a
 * string, an array of strings, an array of token ids or an array of token-id arrays; `dimensions`,
 * `encoding_format` (`float` | `base64`: the upstream encodes) and `user` are checked and passed through, like
 * any other field.
 */
import { z } from "zod";
import { parseBody } from "../parse-body.js";

const tokenId = z.number().int().nonnegative();

/** One of the four shapes of `input` OpenAI documents. */
export const embeddingInput = z.union([
  z.string().min(1),
  z.array(z.string().min(1)).min(1),
  z.array(tokenId).min(1),
  z.array(z.array(tokenId).min(1)).min(1),
]);

export const embeddingSchema = z.looseObject({
  model: z.string().min(1),
  input: embeddingInput,
  dimensions: z.number().int().positive().optional(),
  encoding_format: z.enum(["float", "base64"]).optional(),
  user: z.string().optional(),
});

/** A validated embeddings request. */
export type EmbeddingRequest = z.infer<typeof embeddingSchema>;

const INPUT_SHAPES =
  "must be a non-empty string, an array of non-empty strings, an array of token ids or an array of token-id arrays";

/**
 * Validates a parsed JSON body; the result is a copy down to `input`'s arrays (the input guard may rewrite
 * them without touching the client's body).
 * @throws GatewayError 400 `invalid_request_error` naming the first invalid field in `param` and the message.
 */
export function parseEmbedding(body: unknown): EmbeddingRequest {
  return parseBody(embeddingSchema, body, "model and input", { input: INPUT_SHAPES });
}
