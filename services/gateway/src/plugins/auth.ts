/**
 * Authentication for every route not marked `config: { public: true }`: `Authorization: Bearer <key>` (or, on
 * routes marked `config: { apiKeyHeader: true }` such as Anthropic's `/v1/messages`, `x-api-key: <key>`),
 * where the key is the master key (GATEWAY_MASTER_KEY, compared in constant time) or a virtual key resolved
 * by the {@link KeyAuthenticator} (when a database is configured).
 *
 * On routes marked `config: { userAttribution: true }` (chat completions), a key that names users (the chat's
 * service key, `user_headers: true` in its metadata) is booked on the user its request names, through the
 * {@link UserAttributor} (`users/attribution.ts`); the user headers of every other key are ignored.
 *
 * Cheap refusals: a token without a key's format is refused before any lookup; every invalid key counts
 * against its source (the client address, `request.ip`) in the {@link AuthFailureLimiter}; a source over its
 * limit gets 429 `too_many_auth_failures` with `retry-after` for any key that does not exist (by the filter of
 * existing keys' hash prefixes, `keys/known-keys.ts`), so a flood of bogus keys costs no database queries
 * while every real key, in use or made a moment ago on any instance, keeps working from that address.
 */
import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { bearerFrom, digestOf } from "../auth/bearer.js";
import type { AuthFailureLimiter } from "../auth/failure-limiter.js";
import type { AuthContext, KeyAuthenticator, UserAttributor, VirtualKeyAuth } from "../auth/types.js";
import { GatewayError } from "../errors/gateway-error.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every non-public route. */
    auth: AuthContext | undefined;
  }
  interface FastifyContextConfig {
    /** Route needs no key (health, metrics). */
    public?: boolean;
    /** A key that names users is booked on the named user here (chat completions). */
    userAttribution?: boolean;
    /**
     * The key may also come in the `x-api-key` header (Anthropic's SDKs and Claude Code send it there), when
     * there is no `Authorization: Bearer` header.
     */
    apiKeyHeader?: boolean;
    /**
     * The key may also come in LiteLLM's `x-litellm-api-key` header (`Bearer <key>` or the key alone), when
     * there is no `Authorization: Bearer` header (`/mcp`: MCP clients keep `Authorization` for the upstream).
     */
    litellmKeyHeader?: boolean;
  }
}

export interface AuthPluginOptions {
  /** GATEWAY_MASTER_KEY; undefined disables master-key access. */
  masterKey: string | undefined;
  /** Virtual keys; undefined when the gateway runs without a database. */
  keys: KeyAuthenticator | undefined;
  /** Books service-key calls on the named chat user; undefined without a database (no user to book on). */
  users?: UserAttributor | undefined;
  /** Per-source limit on invalid keys; default: none. */
  failures?: AuthFailureLimiter | undefined;
}

/** The master key's context (the same object for every request: nothing writes to it). */
const MASTER: AuthContext = Object.freeze({ kind: "master" });

const sha256 = digestOf;

/** The `x-api-key` header's value, or undefined when absent, empty or repeated. */
function apiKeyHeader(request: FastifyRequest): string | undefined {
  const value = request.headers["x-api-key"];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The key in LiteLLM's `x-litellm-api-key` header (`Bearer <key>` or `<key>`), or undefined. */
function litellmKeyHeader(request: FastifyRequest): string | undefined {
  const value = request.headers["x-litellm-api-key"];
  if (typeof value !== "string" || value === "") return undefined;
  return bearerFrom(value) ?? (value.includes(" ") ? undefined : value);
}

/** Extracts the bearer token, or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  return bearerFrom(request.headers.authorization);
}

function unauthorized(message: string): GatewayError {
  return new GatewayError(401, message, { type: "authentication_error", code: "invalid_api_key" });
}

function tooManyFailures(retryAfterSeconds: number): GatewayError {
  return new GatewayError(
    429,
    `Too many requests with invalid API keys from this address; try again in ${retryAfterSeconds} s with a valid key.`,
    {
      type: "rate_limit_error",
      code: "too_many_auth_failures",
      headers: { "retry-after": String(retryAfterSeconds) },
    },
  );
}

async function authPlugin(app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const masterDigest = options.masterKey === undefined ? undefined : sha256(options.masterKey);
  const { keys, failures } = options;
  app.decorateRequest("auth", undefined);

  /** The virtual key's context, null for an invalid key; 429 for an unknown key from a blocked source. */
  const resolveVirtual = async (
    source: string,
    token: string,
    digest: Buffer,
  ): Promise<VirtualKeyAuth | null> => {
    if (keys === undefined) return null;
    const retryAfter = failures?.blockedFor(source) ?? 0;
    if (retryAfter === 0) return keys.authenticate(token, digest.toString("hex"));
    const known = await keys.authenticateWhileLimited?.(token, digest.toString("hex"));
    if (known === undefined) throw tooManyFailures(retryAfter);
    return known;
  };

  app.addHook("onRequest", async (request) => {
    if (request.routeOptions.config.public === true) return;
    const { config } = request.routeOptions;
    const alsoHeader = config.apiKeyHeader === true;
    const token =
      bearerToken(request) ??
      (alsoHeader ? apiKeyHeader(request) : undefined) ??
      (config.litellmKeyHeader === true ? litellmKeyHeader(request) : undefined);
    if (token === undefined) {
      throw unauthorized(
        alsoHeader
          ? "Missing API key: send the header x-api-key: <key> (or Authorization: Bearer <key>)."
          : config.litellmKeyHeader === true
            ? "Missing API key: send the header Authorization: Bearer <key> (or x-litellm-api-key: Bearer <key>)."
            : "Missing API key: send the header Authorization: Bearer <key>.",
      );
    }
    // One hash per request: compared with the master key's, then (as hex) the virtual key's lookup key.
    const digest = sha256(token);
    if (masterDigest !== undefined && timingSafeEqual(digest, masterDigest)) {
      request.auth = MASTER;
      return;
    }
    const virtual = await resolveVirtual(request.ip, token, digest);
    if (virtual === null) {
      await failures?.recordFailure(request.ip);
      throw unauthorized("Invalid API key. Check the key, or make a new one in the console.");
    }
    const users = options.users;
    const attribute = virtual.namesUsers && request.routeOptions.config.userAttribution === true;
    request.auth =
      attribute && users !== undefined ? await users.attribute(virtual, request.headers) : virtual;
  });
}

export default fp(authPlugin, { name: "auth" });
