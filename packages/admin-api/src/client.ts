/**
 * A typed client of the gateway's admin API over HTTP (Node's global `fetch`), authenticated with the master
 * key. Every response is checked against its schema in responses.ts; every failure is an
 * {@link AdminApiError}.
 */
import type { z } from "zod";
import {
  type AuditEventRequest,
  type AuditLogsParams,
  auditEventRequest,
  auditEventResponse,
  auditLogsQuery,
  auditLogsResponse,
} from "./audit.js";
import { mcpServerListResponse } from "./mcp.js";
import {
  type DeleteKeysRequest,
  deleteKeysRequest,
  type GenerateKeyRequest,
  generateKeyRequest,
  keyActionRequest,
  type ListKeysParams,
  type NewUserRequest,
  newUserRequest,
  type UpdateKeyRequest,
  type UpdateUserRequest,
  updateKeyRequest,
  updateUserRequest,
} from "./requests.js";
import {
  deleteKeysResponse,
  generateKeyResponse,
  globalSpendTeamsResponse,
  keyInfoResponse,
  listKeysResponse,
  listUsersResponse,
  modelInfoResponse,
  modelListResponse,
  newUserResponse,
  type OpenAIErrorBody,
  openAIErrorBody,
  spendLogsResponse,
  updateKeyResponse,
  usageResponse,
  userInfoResponse,
  userRecord,
} from "./responses.js";
import {
  blockTeamRequest,
  deleteTeamsRequest,
  deleteTeamsResponse,
  listTeamsResponse,
  type NewTeamRequest,
  newTeamRequest,
  type TeamMemberAddRequest,
  type TeamMemberUpdateRequest,
  teamInfoResponse,
  teamMemberAddRequest,
  teamMemberAddResponse,
  teamMemberDeleteRequest,
  teamMemberUpdateRequest,
  teamMemberUpdateResponse,
  teamRecord,
  type UpdateTeamRequest,
  updateTeamRequest,
} from "./teams.js";

/**
 * Why a call failed:
 * - `unreachable`: no HTTP answer (connection refused, DNS, timeout); `status` 0.
 * - `unauthorized`: the gateway refused the master key (401/403): console and gateway keys differ.
 * - `http`: any other non-2xx answer; `body` is the gateway's OpenAI-shaped error when it sent one.
 * - `invalid_response`: a 2xx whose body does not match the schema (a gateway of another version).
 */
export type AdminApiErrorKind = "unreachable" | "unauthorized" | "http" | "invalid_response";

/** A failed admin API call. The message never contains the master key. */
export class AdminApiError extends Error {
  override name = "AdminApiError";
  constructor(
    readonly kind: AdminApiErrorKind,
    /** HTTP status, 0 when there was no answer. */
    readonly status: number,
    message: string,
    /** The gateway's error body, when it sent one. */
    readonly body: OpenAIErrorBody | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link AdminApiClient}. */
export interface AdminApiClientOptions {
  /** Gateway base URL without `/v1`, e.g. `http://gateway:4000`. */
  baseUrl: string;
  /** The gateway's master key (`sk-…`), sent as `Authorization: Bearer`. */
  masterKey: string;
  /** Per-call timeout, ms (default 10 000). */
  timeoutMs?: number;
  /** Replaces the global fetch (tests). */
  fetch?: typeof fetch;
  /**
   * Who the calls are made for, sent as `x-audit-actor` (`console:operator:<name>` or `console:user:<id>`) and
   * recorded in the gateway's audit log; default none (the master key is the actor). See {@link AdminApiClient.as}.
   */
  actor?: string;
}

type Query = Record<string, string | number | boolean | undefined>;

/** Typed calls of the gateway admin API; each method names its route. */
export class AdminApiClient {
  private readonly baseUrl: string;
  private readonly masterKey: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: AdminApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.masterKey = options.masterKey;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /**
   * The same client making its calls on behalf of `actor` (`console:operator:<name>` or `console:user:<id>`),
   * which the gateway's audit log records as the actor of every write.
   */
  as(actor: string): AdminApiClient {
    return new AdminApiClient({ ...this.options, actor });
  }

  /** `POST /audit/event`: records a console sign-in event in the audit log (actor: {@link AdminApiClient.as}). */
  recordAuditEvent(body: AuditEventRequest) {
    return this.call("POST", "/audit/event", auditEventResponse, { body: auditEventRequest.parse(body) });
  }
  /** `GET /audit/logs`: audit rows, newest first, paged and filtered. */
  auditLogs(params: AuditLogsParams = {}) {
    return this.call("GET", "/audit/logs", auditLogsResponse, { query: { ...auditLogsQuery.parse(params) } });
  }

  /** `POST /key/generate`: the response carries the full key, once. */
  generateKey(body: GenerateKeyRequest) {
    return this.call("POST", "/key/generate", generateKeyResponse, { body: generateKeyRequest.parse(body) });
  }
  /** `POST /key/update`. */
  updateKey(body: UpdateKeyRequest) {
    return this.call("POST", "/key/update", updateKeyResponse, { body: updateKeyRequest.parse(body) });
  }
  /** `POST /key/delete` (revoke). 404 when none of the keys exists. */
  deleteKeys(body: DeleteKeysRequest) {
    return this.call("POST", "/key/delete", deleteKeysResponse, { body: deleteKeysRequest.parse(body) });
  }
  /**
   * `POST /key/block` (`blocked` true) or `/key/unblock` (false), `key` the full key or its hash: a blocked key
   * is refused (401) until unblocked. Answers the key after the change (`key` is the hash). 404 when unknown.
   */
  blockKey(key: string, blocked: boolean) {
    const body = keyActionRequest.parse({ key });
    return this.call("POST", blocked ? "/key/block" : "/key/unblock", updateKeyResponse, { body });
  }
  /** `GET /key/info?key=` (key or hash). 404 when unknown. */
  keyInfo(key: string) {
    return this.call("GET", "/key/info", keyInfoResponse, { query: { key } });
  }
  /** `GET /key/list`. */
  listKeys(params: ListKeysParams = {}) {
    return this.call("GET", "/key/list", listKeysResponse, { query: { ...params } });
  }
  /** `POST /user/new` (idempotent). */
  newUser(body: NewUserRequest) {
    return this.call("POST", "/user/new", newUserResponse, { body: newUserRequest.parse(body) });
  }
  /** `GET /user/info?user_id=`. 404 when unknown. */
  userInfo(userId: string) {
    return this.call("GET", "/user/info", userInfoResponse, { query: { user_id: userId } });
  }
  /** `POST /user/update`. */
  updateUser(body: UpdateUserRequest) {
    return this.call("POST", "/user/update", userRecord, { body: updateUserRequest.parse(body) });
  }
  /** `GET /user/list`. */
  listUsers(params: { page?: number; page_size?: number } = {}) {
    return this.call("GET", "/user/list", listUsersResponse, { query: params });
  }
  /** `GET /spend/logs`. */
  spendLogs(params: {
    api_key?: string;
    user_id?: string;
    team_id?: string;
    start_date?: string;
    end_date?: string;
    limit?: number;
  }) {
    return this.call("GET", "/spend/logs", spendLogsResponse, { query: params });
  }
  /**
   * `GET /spend/usage`: one user's, one key's, one team's, or (none) the whole platform's usage; `days` 1..366
   * ending with `end_date` (a UTC day, `YYYY-MM-DD`; default today).
   */
  usage(
    params: ({ user_id: string } | { api_key: string } | { team_id: string } | Record<never, never>) & {
      days: number;
      end_date?: string;
    },
  ) {
    return this.call("GET", "/spend/usage", usageResponse, { query: params });
  }
  /** `GET /model/info`: every deployment with its prices (LiteLLM's route; master key). */
  modelInfo() {
    return this.call("GET", "/model/info", modelInfoResponse, {});
  }
  /**
   * `GET /v1/mcp/server` (LiteLLM's MCP server listing; master key): the declared MCP servers with their tools
   * (`<server>-<tool>`), transport and `allow_all_keys`; never a credential.
   */
  mcpServers() {
    return this.call("GET", "/v1/mcp/server", mcpServerListResponse, {});
  }
  /** `POST /team/new` (LiteLLM's): the team created. 400 when `team_id` exists. */
  newTeam(body: NewTeamRequest) {
    return this.call("POST", "/team/new", teamRecord, { body: newTeamRequest.parse(body) });
  }
  /** `POST /team/update`: the team after the change. 404 when unknown. */
  updateTeam(body: UpdateTeamRequest) {
    return this.call("POST", "/team/update", teamRecord, { body: updateTeamRequest.parse(body) });
  }
  /** `POST /team/delete`: the teams and the keys revoked with them. 404 when none exists. */
  deleteTeams(teamIds: string[]) {
    const body = deleteTeamsRequest.parse({ team_ids: teamIds });
    return this.call("POST", "/team/delete", deleteTeamsResponse, { body });
  }
  /** `POST /team/block` (`blocked` true) or `/team/unblock` (false): the team after the change. */
  blockTeam(teamId: string, blocked: boolean) {
    const body = blockTeamRequest.parse({ team_id: teamId });
    return this.call("POST", blocked ? "/team/block" : "/team/unblock", teamRecord, { body });
  }
  /** `GET /team/info?team_id=`: the team, its keys and memberships. 404 when unknown. */
  teamInfo(teamId: string) {
    return this.call("GET", "/team/info", teamInfoResponse, { query: { team_id: teamId } });
  }
  /** `GET /team/list`: every team, or (`user_id`) the teams that user is a member of; pages of 1..100. */
  listTeams(params: { user_id?: string; page?: number; page_size?: number } = {}) {
    return this.call("GET", "/team/list", listTeamsResponse, { query: params });
  }
  /** `POST /team/member_add`. 400 when the user is a member already. */
  addTeamMember(body: TeamMemberAddRequest) {
    const parsed = teamMemberAddRequest.parse(body);
    return this.call("POST", "/team/member_add", teamMemberAddResponse, { body: parsed });
  }
  /** `POST /team/member_update`: role, `max_budget_in_team` (USD), tpm/rpm. */
  updateTeamMember(body: TeamMemberUpdateRequest) {
    const parsed = teamMemberUpdateRequest.parse(body);
    return this.call("POST", "/team/member_update", teamMemberUpdateResponse, { body: parsed });
  }
  /** `POST /team/member_delete`: the team after the change. */
  deleteTeamMember(body: { team_id: string; user_id?: string; user_email?: string }) {
    const parsed = teamMemberDeleteRequest.parse(body);
    return this.call("POST", "/team/member_delete", teamRecord, { body: parsed });
  }
  /** `GET /global/spend/teams`: LiteLLM's spend-by-team report of the last 30 days. */
  globalSpendTeams() {
    return this.call("GET", "/global/spend/teams", globalSpendTeamsResponse, {});
  }
  /** `GET /v1/models`. */
  models() {
    return this.call("GET", "/v1/models", modelListResponse, {});
  }
  /** `GET /health/liveliness`: resolves when the gateway answers 2xx. */
  async liveliness(): Promise<void> {
    await this.send("GET", "/health/liveliness", {});
  }

  private async call<S extends z.ZodType>(
    method: "GET" | "POST",
    path: string,
    schema: S,
    request: { body?: unknown; query?: Query },
  ): Promise<z.infer<S>> {
    const response = await this.send(method, path, request);
    const json: unknown = await response.json().catch(() => undefined);
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AdminApiError(
        "invalid_response",
        response.status,
        `${method} ${path}: unexpected response from the gateway (${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"})`,
      );
    }
    return parsed.data;
  }

  private async send(
    method: "GET" | "POST",
    path: string,
    request: { body?: unknown; query?: Query },
  ): Promise<Response> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method,
        headers: {
          authorization: `Bearer ${this.masterKey}`,
          ...(this.options.actor === undefined ? {} : { "x-audit-actor": this.options.actor }),
          ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new AdminApiError("unreachable", 0, `gateway unreachable at ${this.baseUrl} (${reason})`, null, {
        cause: error,
      });
    }
    if (response.ok) return response;
    const parsed = openAIErrorBody.safeParse(await response.json().catch(() => undefined));
    const body = parsed.success ? parsed.data : null;
    const detail = body?.error.message ?? `HTTP ${response.status}`;
    if (response.status === 401 || response.status === 403) {
      throw new AdminApiError(
        "unauthorized",
        response.status,
        `the gateway refused the master key (${response.status}: ${detail}); GATEWAY_MASTER_KEY must be the same in console and gateway`,
        body,
      );
    }
    throw new AdminApiError("http", response.status, `${method} ${path}: ${detail}`, body);
  }
}
