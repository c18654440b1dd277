/**
 * Schemas of the config keys the gateway reads (the key sets in litellm-keys.ts decide which keys exist).
 * Units are the file's: seconds for timeouts, USD per token for costs.
 */
import { z } from "zod";
import { PRICE_PART_KEY_NAMES, type PricePartKey } from "./price-keys.js";

/** Accepts numbers, and numeric strings (a value that came from an `os.environ/VAR` reference). */
const numeric = <T extends z.ZodNumber>(schema: T) =>
  z.preprocess(
    (v) => (typeof v === "string" && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(v) ? Number(v) : v),
    schema,
  );
const seconds = z.number().positive();
const count = z.number().int().nonnegative();
const fallbackList = z.array(z.record(z.string(), z.array(z.string())));
const tags = z.array(z.string().min(1));
/** LiteLLM's per-part price keys (`config/price-keys.ts`), USD per token. */
const pricePartFields = (cost: z.ZodType<number | undefined>) =>
  Object.fromEntries(PRICE_PART_KEY_NAMES.map((key) => [key, cost])) as Record<
    PricePartKey,
    z.ZodType<number | undefined>
  >;

/**
 * One of `litellm_params.cache_control_injection_points` (LiteLLM's `CacheControlMessageInjectionPoint`;
 * providers/anthropic/cache-injection.ts): `index` an integer (negative from the end) or its decimal string.
 */
const cacheControlInjectionPoint = z
  .object({
    location: z.literal("message"),
    role: z.enum(["system", "user", "assistant"]).optional(),
    index: numeric(z.number().int()).optional(),
    control: z
      .object({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .refine((p) => p.role !== undefined || p.index !== undefined, {
    message: "an injection point needs a role or an index",
  });

/** `model_list[].litellm_params`. */
export const litellmParamsSchema = z.object({
  model: z.string().min(1),
  api_base: z.string().min(1).optional(),
  api_key: z.string().optional(),
  rpm: numeric(count).optional(),
  tpm: numeric(count).optional(),
  input_cost_per_token: numeric(z.number().nonnegative()).optional(),
  output_cost_per_token: numeric(z.number().nonnegative()).optional(),
  ...pricePartFields(numeric(z.number().nonnegative()).optional()),
  timeout: numeric(seconds).optional(),
  stream_timeout: numeric(seconds).optional(),
  weight: numeric(z.number().positive()).optional(),
  tags: tags.optional(),
  cache_control_injection_points: z.array(cacheControlInjectionPoint).optional(),
});

/** `model_list[].model_info` (the keys the gateway reads; the mapping is open). */
export const modelInfoSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).optional(),
  tags: tags.optional(),
  mode: z.string().optional(),
  base_model: z.string().optional(),
  supported_endpoints: z
    .array(z.string().regex(/^\/v1\//, "must be an API path such as /v1/responses"))
    .optional(),
  input_cost_per_token: z.number().nonnegative().optional(),
  output_cost_per_token: z.number().nonnegative().optional(),
  max_output_tokens: z.number().int().positive().optional(),
  /** The gateway's own key (not LiteLLM's): the deployment is known to ignore the output cap it is sent. */
  ignores_output_cap: z.boolean().optional(),
  ...pricePartFields(z.number().nonnegative().optional()),
});

/** `litellm_settings`. */
export const litellmSettingsSchema = z.object({
  num_retries: count.optional(),
  request_timeout: seconds.optional(),
  allowed_fails: count.optional(),
  fallbacks: fallbackList.optional(),
  /** LiteLLM's response cache switch; `cache_params` is read by config/cache-params.ts. */
  cache: z.boolean().optional(),
  cache_params: z.unknown().optional(),
});

/** `router_settings`. */
export const routerSettingsSchema = z.object({
  routing_strategy: z.string().optional(),
  num_retries: count.optional(),
  timeout: seconds.optional(),
  stream_timeout: seconds.optional(),
  allowed_fails: count.optional(),
  cooldown_time: z.number().nonnegative().optional(),
  fallbacks: fallbackList.optional(),
  enable_tag_filtering: z.boolean().optional(),
  tag_filtering_match_any: z.boolean().optional(),
});

/** `general_settings`. */
export const generalSettingsSchema = z.object({
  master_key: z.string().min(1).optional(),
  /** Seconds a stream's client may read nothing before the stream is ended (the gateway's own key). */
  stream_client_idle_timeout: numeric(seconds).optional(),
});
