/**
 * Response schemas of the gateway's admin API, as its routes answer today (LiteLLM's
 * `LiteLLM_VerificationToken`, `LiteLLM_UserTable` and `LiteLLM_SpendLogs` fields the gateway keeps, plus
 * `status`). Money USD, limits per minute, times ISO 8601. Unknown members pass through (`looseObject`), so a
 * newer gateway adding a field does not break an older client.
 */
import { z } from "zod";
import { isoTime } from "./fields.js";

/** The limit fields of a key, user or team, rolled over to the current budget period. */
export const limitState = {
  /** USD spent in the current period. */
  spend: z.number(),
  max_budget: z.number().nullable(),
  budget_duration: z.string().nullable(),
  budget_reset_at: isoTime,
  tpm_limit: z.number().nullable(),
  rpm_limit: z.number().nullable(),
  /** Absent from gateways older than the field. */
  max_parallel_requests: z.number().nullable().optional(),
};

/** A key as listed: `token` is the SHA-256 hex, `key_name` the display form `sk-…abcd`; never the full key. */
export const keyRecord = z.looseObject({
  token: z.string(),
  key_name: z.string(),
  key_alias: z.string().nullable(),
  user_id: z.string().nullable(),
  /** The key's team, or null (absent from gateways older than teams). */
  team_id: z.string().nullable().optional(),
  models: z.array(z.string()),
  ...limitState,
  metadata: z.record(z.string(), z.unknown()),
  object_permission: z.record(z.string(), z.unknown()).nullable().optional(),
  expires: isoTime,
  created_at: isoTime,
  updated_at: isoTime,
  revoked_at: isoTime,
  status: z.enum(["active", "revoked", "expired"]),
  /** Refused until `/key/unblock` (absent from gateways older than /key/block). */
  blocked: z.boolean().optional(),
  /** Start of the key's newest booked request (`/key/list` only), null if never used. */
  last_used_at: isoTime.optional(),
});
export type KeyRecord = z.infer<typeof keyRecord>;

/** `POST /key/generate`: the key record plus the full `key` (shown once), `token_id` and `duration`. */
export const generateKeyResponse = keyRecord.extend({
  key: z.string().startsWith("sk-"),
  token_id: z.string(),
  duration: z.string(),
});
export type GenerateKeyResponse = z.infer<typeof generateKeyResponse>;

/** `POST /key/update`: `key` is the hash. */
export const updateKeyResponse = keyRecord.extend({ key: z.string() });

/** `POST /key/delete`: hashes of the revoked keys. */
export const deleteKeysResponse = z.looseObject({ deleted_keys: z.array(z.string()) });

/** `GET /key/info`. */
export const keyInfoResponse = z.looseObject({ key: z.string(), info: keyRecord });
export type KeyInfoResponse = z.infer<typeof keyInfoResponse>;

/** `GET /key/list`: hashes, or records with `return_full_object=true`. */
export const listKeysResponse = z.looseObject({
  keys: z.array(z.union([z.string(), keyRecord])),
  total_count: z.number(),
  current_page: z.number(),
  total_pages: z.number(),
});
export type ListKeysResponse = z.infer<typeof listKeysResponse>;

/** A user (`LiteLLM_UserTable` fields the gateway keeps). */
export const userRecord = z.looseObject({
  user_id: z.string(),
  user_email: z.string().nullable(),
  user_role: z.string(),
  ...limitState,
  metadata: z.record(z.string(), z.unknown()),
  created_at: isoTime,
  updated_at: isoTime,
});
export type UserRecord = z.infer<typeof userRecord>;

/** `POST /user/new`: the stored user and whether this call created it. */
export const newUserResponse = userRecord.extend({ created: z.boolean() });
export type NewUserResponse = z.infer<typeof newUserResponse>;

/** `GET /user/info`: the user and every key of theirs (revoked and expired included). */
export const userInfoResponse = z.looseObject({
  user_id: z.string(),
  user_info: userRecord,
  keys: z.array(keyRecord),
});
export type UserInfoResponse = z.infer<typeof userInfoResponse>;

/**
 * `POST /user/delete`: the number of users deleted, a bare JSON number, as LiteLLM answers it (its `delete_user`
 * in litellm/proxy/management_endpoints/internal_user_endpoints.py returns Prisma's `delete_many` count).
 */
export const deleteUsersResponse = z.number().int().nonnegative();

/** `GET /user/list`. */
export const listUsersResponse = z.looseObject({
  users: z.array(userRecord),
  total: z.number(),
  page: z.number(),
  page_size: z.number(),
  total_pages: z.number(),
});
export type ListUsersResponse = z.infer<typeof listUsersResponse>;

/**
 * How one request's tokens divide by price (the gateway's `UsageBreakdown`, docs/cost.md "Where the breakdown is
 * recorded"), tokens (`web_search_requests`: requests). Input parts never overlap: `input + cache_read +
 * cache_write_5m + cache_write_1h` is `prompt_tokens`; `output` is `completion_tokens`, and `output_reasoning`,
 * `output_audio`, `accepted_prediction` and `rejected_prediction` are parts of it. `input_audio` is part of `input`.
 */
export const usageDetails = z.looseObject({
  input: z.number(),
  input_audio: z.number(),
  cache_read: z.number(),
  cache_write_5m: z.number(),
  cache_write_1h: z.number(),
  output: z.number(),
  output_reasoning: z.number(),
  output_audio: z.number(),
  accepted_prediction: z.number(),
  rejected_prediction: z.number(),
  web_search_requests: z.number(),
});
export type UsageDetails = z.infer<typeof usageDetails>;

/** One request in the spend log (`LiteLLM_SpendLogs` names: `user`, `startTime`, `endTime`, …). */
export const spendLog = z.looseObject({
  request_id: z.string(),
  /** Hash of the key, or null (master key). */
  api_key: z.string().nullable(),
  key_alias: z.string().nullable(),
  user: z.string().nullable(),
  /** The key's team (LiteLLM's `team_id`), or null; absent from gateways older than teams. */
  team_id: z.string().nullable().optional(),
  call_type: z.string(),
  model_group: z.string(),
  model: z.string(),
  model_id: z.string().nullable(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  spend: z.number(),
  startTime: z.string(),
  endTime: z.string(),
  status: z.number(),
  stream: z.boolean(),
  /** The token breakdown; null when the upstream reported no usage (billed from estimates); absent from older gateways. */
  usage_details: usageDetails.nullable().optional(),
  /**
   * Why a failed or refused call failed: the OpenAI error `type` (`budget_exceeded`, `rate_limit_error`,
   * `upstream_error`, `timeout`, `client_closed_request`, …) or the gateway's finer name where that type is generic
   * (`guardrail_violation`, `key_model_access_denied`); null for an answered call; absent from older gateways.
   * A call refused before any upstream answered has spend 0, no tokens and `model` "".
   */
  reason: z.string().nullable().optional(),
  /** Answered from the response cache (LiteLLM's `cache_hit`); absent from older gateways. */
  cache_hit: z.boolean().optional(),
  /** The response cache's key of the call (LiteLLM's `cache_key`), or null. */
  cache_key: z.string().nullable().optional(),
  /** USD a cache hit saved (what the stored call cost); 0 for other rows. */
  cache_saved_spend: z.number().optional(),
});
export type SpendLog = z.infer<typeof spendLog>;

/** `GET /spend/logs`. */
export const spendLogsResponse = z.array(spendLog);

/**
 * `GET /global/spend/teams` (LiteLLM's spend-by-team report, last 30 UTC days): `daily_spend` entries are
 * `{date: "YYYY-MM-DD", <team alias or id>: USD, …}`; `teams` the names used there (`Unassigned` for keys without
 * a team); `total_spend_per_team` the ten teams that spent most (USD), most first.
 */
export const globalSpendTeamsResponse = z.looseObject({
  daily_spend: z.array(z.looseObject({ date: z.string() }).catchall(z.union([z.number(), z.string()]))),
  teams: z.array(z.string()),
  total_spend_per_team: z.array(
    z.looseObject({
      team_id: z.string().nullable(),
      team_alias: z.string().nullable(),
      total_spend: z.number(),
    }),
  ),
});
export type GlobalSpendTeamsResponse = z.infer<typeof globalSpendTeamsResponse>;

/** Sums over a set of requests: USD and tokens. */
export const usageTotals = z.looseObject({
  spend: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  /** Of `prompt_tokens`, those read from the provider's prompt cache (`usage_details.cache_read`). */
  cached_tokens: z.number(),
  requests: z.number(),
  /**
   * Of `requests`, those answered with an error status: refused by the gateway, the provider's error, or 499 (the
   * client left).
   */
  failed_requests: z.number(),
  /** Of `failed_requests`, the refused ones: a 4xx status but 499 (budget, rate limit, guardrail, model access). */
  refused_requests: z.number(),
  /** Of `requests`, those answered from the gateway's response cache (spend 0; `cache_hit` in /spend/logs). */
  cache_hits: z.number(),
  /** What those cache hits would have cost, USD (the spend rows' `cache_saved_spend`). */
  cache_saved_spend: z.number(),
});
export type UsageTotals = z.infer<typeof usageTotals>;

/**
 * `GET /spend/usage`: one user's, one key's or the platform's usage over the last `days` UTC days: totals, one entry per day
 * (oldest first, empty days as zeros), per model alias, per key, the 50 most recent requests (refused and failed
 * calls included, each with its `reason`), and the failed calls per reason.
 */
export const usageResponse = z.looseObject({
  user_id: z.string().optional(),
  api_key: z.string().optional(),
  days: z.number(),
  start_date: z.string(),
  end_date: z.string(),
  totals: usageTotals,
  daily: z.array(usageTotals.extend({ date: z.string() })),
  by_model: z.array(usageTotals.extend({ model: z.string() })),
  by_key: z.array(
    usageTotals.extend({
      api_key: z.string().nullable(),
      key_name: z.string().nullable(),
      key_alias: z.string().nullable(),
    }),
  ),
  recent: z.array(spendLog),
  /**
   * Prompt-cache reads per deployment (`model_id`, as in `/model/info`; null for rows of no deployment) and
   * price tier (`long_context`: prompts over 200,000 tokens), tokens.
   */
  cache_reads: z.array(
    z.looseObject({ model_id: z.string().nullable(), long_context: z.boolean(), cached_tokens: z.number() }),
  ),
  /**
   * Failed calls (status >= 400) per `reason` (null: rows recorded before reasons were) and whether they are
   * refusals (`refused`: counted in `refused_requests`), most first.
   */
  by_reason: z.array(
    z.looseObject({ reason: z.string().nullable(), refused: z.boolean(), requests: z.number() }),
  ),
});
export type UsageResponse = z.infer<typeof usageResponse>;

/**
 * `GET /model/info` (LiteLLM's route of that name): one entry per deployment, its alias (`model_name`), its
 * upstream model (`litellm_params.model`, `provider/name`; never an API key or base URL) and the prices it is
 * billed at (`model_info`: LiteLLM's keys, USD per token; a part without its own price absent).
 */
export const modelInfoResponse = z.looseObject({
  data: z.array(
    z.looseObject({
      model_name: z.string(),
      litellm_params: z.looseObject({ model: z.string() }),
      model_info: z.looseObject({
        id: z.string(),
        input_cost_per_token: z.number(),
        output_cost_per_token: z.number(),
        cache_read_input_token_cost: z.number().optional(),
        input_cost_per_token_above_200k_tokens: z.number().optional(),
        cache_read_input_token_cost_above_200k_tokens: z.number().optional(),
      }),
    }),
  ),
});
export type ModelInfoResponse = z.infer<typeof modelInfoResponse>;

/** `GET /v1/models` (OpenAI's list shape). */
export const modelListResponse = z.looseObject({
  object: z.literal("list"),
  data: z.array(
    z.looseObject({ id: z.string(), object: z.string(), created: z.number(), owned_by: z.string() }),
  ),
});

/** OpenAI's error body, as every gateway error is shaped. */
export const openAIErrorBody = z.object({
  error: z.looseObject({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable().optional(),
    code: z.union([z.string(), z.number()]).nullable().optional(),
  }),
});
export type OpenAIErrorBody = z.infer<typeof openAIErrorBody>;
