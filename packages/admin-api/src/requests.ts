/**
 * Request schemas of the gateway's admin API (master key only), LiteLLM's shapes
 * (litellm/proxy/_types.py `GenerateKeyRequest`, `UpdateKeyRequest`, `KeyRequest`, `NewUserRequest`,
 * `UpdateUserRequest`; docs/my-website/docs/proxy/virtual_keys.md in BerriAI/litellm).
 */
import { z } from "zod";
import {
  duration,
  identifier,
  limitFields,
  metadata,
  modelList,
  objectPermission,
  pageNumber,
  pageSize,
  queryBoolean,
  userRole,
} from "./fields.js";
import { adminRequest } from "./known-fields.js";

const keyFields = {
  ...limitFields,
  metadata: metadata.nullish(),
  object_permission: objectPermission.nullish(),
  models: modelList.nullish(),
  key_alias: identifier.nullish(),
};

/** `POST /key/generate`. `duration` omitted or null = 90 days; a custom `key` value is refused. */
export const generateKeyRequest = adminRequest(
  "/key/generate",
  z.object({
    ...keyFields,
    duration: duration.nullish(),
    user_id: identifier.nullish(),
    /** The team the key belongs to (`/team/new`); an unknown team is refused with 400. */
    team_id: identifier.nullish(),
    key: z
      .unknown()
      .refine((v) => v === undefined || v === null, {
        message: "custom key values are not supported: the gateway generates every key",
      })
      .optional(),
  }),
);
export type GenerateKeyRequest = z.input<typeof generateKeyRequest>;

/**
 * `POST /key/update`: `key` is the full key or its hash; `duration` is a new lifetime from now. A key's team is
 * fixed when it is made: `team_id` is refused (400) rather than ignored.
 */
export const updateKeyRequest = adminRequest(
  "/key/update",
  z.object({
    ...keyFields,
    key: identifier,
    duration: duration.nullish(),
    user_id: identifier.nullish(),
    team_id: z
      .unknown()
      .refine((v) => v === undefined, {
        message: "a key's team cannot be changed: generate a key with that team_id and revoke this one",
      })
      .optional(),
  }),
);
export type UpdateKeyRequest = z.input<typeof updateKeyRequest>;

/** `POST /key/delete` (revokes; terminal): keys or hashes, 1..1000. */
export const deleteKeysRequest = z.object({ keys: z.array(identifier).min(1).max(1000) });
export type DeleteKeysRequest = z.input<typeof deleteKeysRequest>;

/**
 * `POST /key/block`, `POST /key/unblock`, `POST /key/regenerate` (LiteLLM's `BlockKeyRequest`, and the key
 * of `RegenerateKeyRequest`): the full key or its hash.
 */
export const keyActionRequest = z.object({ key: identifier });

/** `GET /key/info?key=` (full key or hash). */
export const keyInfoQuery = z.object({ key: identifier });

/** `GET /key/list` query. */
export const listKeysQuery = z.object({
  page: pageNumber(1),
  size: pageSize(10, 100),
  user_id: identifier.optional(),
  team_id: identifier.optional(),
  key_alias: identifier.optional(),
  key_hash: identifier.optional(),
  return_full_object: queryBoolean,
  include_revoked: queryBoolean,
});
/** What a caller passes for {@link listKeysQuery} (booleans as booleans; the client turns them into text). */
export interface ListKeysParams {
  page?: number;
  size?: number;
  user_id?: string;
  team_id?: string;
  key_alias?: string;
  key_hash?: string;
  return_full_object?: boolean;
  include_revoked?: boolean;
}

const userFields = {
  user_email: z.string().trim().max(320).nullish(),
  ...limitFields,
  metadata: metadata.nullish(),
};

/**
 * `POST /user/new`, idempotent: an existing `user_id` answers 200 with the stored user unchanged and
 * `created: false`. Omitted limits take the gateway's defaults; explicit null means unlimited.
 */
export const newUserRequest = adminRequest(
  "/user/new",
  z.object({ ...userFields, user_id: identifier.optional(), user_role: userRole.optional() }),
);
export type NewUserRequest = z.input<typeof newUserRequest>;

/** `POST /user/update`: omitted fields unchanged, null clears (unlimited). */
export const updateUserRequest = adminRequest(
  "/user/update",
  z.object({ ...userFields, user_id: identifier, user_role: userRole.optional() }),
);
export type UpdateUserRequest = z.input<typeof updateUserRequest>;

/** `POST /user/delete` (LiteLLM's `DeleteUserRequest`): 1..100 user ids; their keys are revoked. */
export const deleteUsersRequest = z.object({ user_ids: z.array(identifier).min(1).max(100) });

/** `GET /user/info?user_id=`. */
export const userInfoQuery = z.object({ user_id: identifier });
/** `GET /user/list?page=&page_size=` (page_size 1..100, default 25). */
export const listUsersQuery = z.object({ page: pageNumber(1), page_size: pageSize(25, 100) });

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
/** Earliest and latest instants a date parameter may name, epoch ms (Postgres stores far more; these are sane). */
export const FIRST_DATE_MS = Date.UTC(1970, 0, 1);
export const LAST_DATE_MS = Date.UTC(9999, 11, 31);
/** `YYYY-MM-DD` (a UTC day) or an ISO 8601 time between 1970-01-01 and 9999-12-31. */
export const dateParam = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), {
    message: "expected a date (YYYY-MM-DD) or an ISO 8601 time",
  })
  .refine((v) => Date.parse(v) >= FIRST_DATE_MS && Date.parse(v) <= LAST_DATE_MS, {
    message: "expected a date between 1970-01-01 and 9999-12-31",
  })
  .optional();
/** True for a date without a time (the whole UTC day is meant). */
export const isDateOnly = (v: string): boolean => DATE_ONLY.test(v);

/** `GET /spend/logs` query: newest first, `limit` 1..1000 (default 100); `team_id`: the calls of a team's keys. */
export const spendLogsQuery = z.object({
  api_key: identifier.optional(),
  user_id: identifier.optional(),
  team_id: identifier.optional(),
  start_date: dateParam,
  end_date: dateParam,
  limit: pageSize(100, 1000),
});

/** A UTC day, `YYYY-MM-DD`, between 1970-01-01 and 9999-12-31. */
export const utcDay = z
  .string()
  .regex(DATE_ONLY, { message: "expected a day as YYYY-MM-DD" })
  .refine((v) => !Number.isNaN(Date.parse(v)) && new Date(v).toISOString().startsWith(v), {
    message: "expected a day that exists (YYYY-MM-DD)",
  })
  .refine((v) => Date.parse(v) >= FIRST_DATE_MS && Date.parse(v) <= LAST_DATE_MS, {
    message: "expected a date between 1970-01-01 and 9999-12-31",
  });

/**
 * `GET /spend/usage` query: at most one of `user_id` / `api_key` / `team_id` (none: every request of the
 * platform, the master key's and keys of no user included; `team_id`: the calls of the team's keys); `days`
 * 1..366 (default 30) ending with `end_date` (a UTC day, default today).
 */
export const spendUsageQuery = z
  .object({
    user_id: identifier.optional(),
    api_key: identifier.optional(),
    team_id: identifier.optional(),
    days: z.coerce.number().int().min(1).max(366).default(30),
    end_date: utcDay.optional(),
  })
  .refine((q) => [q.user_id, q.api_key, q.team_id].filter((v) => v !== undefined).length <= 1, {
    message: "give at most one of user_id, api_key or team_id",
    path: ["user_id"],
  });
