/**
 * The console server's JSON API as the web app uses it. State-changing calls carry the session's CSRF token
 * (from /api/me); a 401 means the session ended, so the page goes to /unauthorized.
 */
import type {
  ObjectPermission as AdminObjectPermission,
  ListedMcpServer,
  SpendLog,
  TeamMembership,
  UsageResponse,
  UsageTotals,
  UserRecord,
} from "@platform/admin-api";

export type { TeamMembership, UsageResponse, UsageTotals, UserRecord };

/** One request as the console lists it (the gateway's `/spend/logs` row; the chat's calls keyed "Chat"). */
export type SpendLogRow = SpendLog;

/** Prompt caching over a period (`caching` of `GET /api/usage`): tokens and USD saved. */
export interface CachingSavings {
  /** Input tokens read from the provider's prompt cache. */
  cached_tokens: number;
  /** USD: what they would have cost as fresh input minus what they cost. */
  saved: number;
  /** Of `cached_tokens`, those of a model the gateway no longer lists (not priced). */
  unpriced_tokens: number;
}

/** `GET /api/usage`: the gateway's usage (without its per-deployment cache reads) and `caching`. */
export type ConsoleUsage = Pick<
  UsageResponse,
  "days" | "start_date" | "end_date" | "totals" | "daily" | "by_model" | "by_key" | "recent" | "by_reason"
> & { caching: CachingSavings };

/** `GET /api/me`. */
export interface Me {
  kind: "chat" | "operator";
  user_id: string | null;
  email: string | null;
  role: string;
  is_admin: boolean;
  csrf_token: string;
  gateway_url: string;
  chat_url: string;
  account: UserRecord | null;
  provisioning_error: { kind: string; message: string } | null;
}

/** A key as the console lists it (never the full key; `token` is its hash). */
export interface ConsoleKey {
  token: string;
  key_name: string;
  key_alias: string | null;
  models: string[];
  /** The key's team (its limits apply instead of the owner's), or null. */
  team_id?: string | null;
  /** USD spent in the key's current budget period. */
  spend: number;
  max_budget: number | null;
  budget_duration: string | null;
  tpm_limit: number | null;
  rpm_limit: number | null;
  created_at: string | null;
  expires: string | null;
  status: "active" | "revoked" | "expired";
  /** Blocked by an operator: refused by the gateway (401) until unblocked (absent from older consoles). */
  blocked?: boolean;
  /** Start of the key's newest request, null if never used (lags a call by a few seconds). */
  last_used_at: string | null;
}

/** LiteLLM's `object_permission` of a key, the MCP part (its MCP servers and tools); set by operators only. */
export type ObjectPermission = AdminObjectPermission;

/** A key as the operator's Keys view lists it: with its owner and its MCP grants. */
export interface OwnedKey extends ConsoleKey {
  user_id: string | null;
  user_email: string | null;
  /** The alias of the key's team (`team_id`), null without a team or when the team has no alias. */
  team_alias: string | null;
  /** The chat's service key (its calls are booked on the chat user they name). */
  service: boolean;
  object_permission: ObjectPermission | null;
}

/** One of the gateway's declared MCP servers with its tools (`GET /api/admin/mcp-servers`). */
export type McpServer = ListedMcpServer;

/** `POST /api/keys` answer: the key, in full, this once. */
export interface CreatedKey extends ConsoleKey {
  key: string;
}

/** Platform spend for the Admin view. */
export interface PlatformSpend {
  days: number;
  users: number;
  totals: UsageTotals;
  daily: Array<UsageTotals & { date: string }>;
  by_model: Array<UsageTotals & { model: string }>;
  by_key: UsageResponse["by_key"];
  /** Refused and failed calls per reason (`/spend/usage`'s `by_reason`). */
  by_reason: UsageResponse["by_reason"];
}

/** The session's role in a team: console administrator, team admin, or member. */
export type TeamAccess = "operator" | "admin" | "user";

/** A team as the console lists it (`GET /api/teams`): LiteLLM's limit fields, USD and per minute. */
export interface ConsoleTeam {
  team_id: string;
  team_alias: string | null;
  models: string[];
  /** USD spent in the team's current budget period. */
  spend: number;
  max_budget: number | null;
  budget_duration: string | null;
  budget_reset_at: string | null;
  tpm_limit: number | null;
  rpm_limit: number | null;
  blocked: boolean;
  /** How many members. */
  members: number;
  access?: TeamAccess | null;
  /** The team's MCP grants (operators only; absent for others, null when none). */
  object_permission?: ObjectPermission | null;
}

/** `GET /api/teams/:teamId`: members and keys only for team admins and operators. */
export interface TeamDetail {
  team: ConsoleTeam;
  access: TeamAccess;
  membership: TeamMembership | null;
  members: TeamMembership[] | null;
  keys: Array<ConsoleKey & { user_id: string | null }> | null;
}

/** `GET /api/teams/:teamId/spend`: a team's spend over `days` days by member, key and model. */
export interface TeamSpend {
  days: number;
  totals: UsageTotals;
  by_member: Array<UsageTotals & { user_id: string | null; user_email: string | null }>;
  by_key: Array<UsageTotals & { api_key: string; key_name: string; key_alias: string | null }>;
  by_model: Array<UsageTotals & { model: string }>;
}

/** An OpenAI-shaped error from the console API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null,
  ) {
    super(message);
  }
}

let csrfToken = "";

/** Remembers the CSRF token of the session (from /api/me). */
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** Calls the console API; throws {@link ApiError} with the server's message on a non-2xx. */
export async function api<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as {
    error?: { message?: string; param?: string | null };
  };
  if (res.status === 401 && !path.startsWith("/api/admin/login")) {
    window.location.assign("/unauthorized");
  }
  if (!res.ok) {
    throw new ApiError(res.status, json.error?.message ?? `HTTP ${res.status}`, json.error?.param ?? null);
  }
  return json as T;
}
