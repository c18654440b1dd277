/**
 * The console API's errors: OpenAI's shape `{"error":{"message","type","param","code"}}` (`code` the HTTP
 * status as text, LiteLLM's convention), and how a failed gateway call becomes one.
 */
import { AdminApiError, checkRequest } from "@platform/admin-api";
import type { FastifyError, FastifyInstance } from "fastify";
import type { z } from "zod";

/** An error the console API answers with; `status` is the HTTP status. Messages never carry a key. */
export class ConsoleError extends Error {
  override name = "ConsoleError";
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** 400 `invalid_request_error` about one field. */
export const invalidRequest = (message: string, param: string | null = null) =>
  new ConsoleError(400, message, "invalid_request_error", param);
/** 404 `not_found_error` (also what a key of another user looks like: no hint that it exists). */
export const notFound = (message: string, param: string | null = null) =>
  new ConsoleError(404, message, "not_found_error", param);

/** 403 `permission_error`: the session may not do this (e.g. a team it does not administer). */
export const forbidden = (message: string) => new ConsoleError(403, message, "permission_error");

const body = (status: number, message: string, type: string, param: string | null) => ({
  error: { message, type, param, code: String(status) },
});

/**
 * How a failed gateway call is answered: the gateway's own 4xx (a refused limit, an unknown key) passes
 * through; no answer, a refused master key or a gateway fault is a 502 saying which.
 */
export function fromAdminApiError(error: AdminApiError): {
  status: number;
  payload: ReturnType<typeof body>;
} {
  if (error.kind === "http" && error.status >= 400 && error.status < 500 && error.body !== null) {
    const e = error.body.error;
    return { status: error.status, payload: body(error.status, e.message, e.type, e.param ?? null) };
  }
  const type =
    error.kind === "unreachable"
      ? "gateway_unreachable"
      : error.kind === "unauthorized"
        ? "gateway_auth_error"
        : "gateway_error";
  return { status: 502, payload: body(502, error.message, type, null) };
}

/** Installs the error handler: ConsoleError, AdminApiError, fastify's 4xx (bad JSON, too large), else 500. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ConsoleError | AdminApiError, request, reply) => {
    if (error instanceof ConsoleError) {
      return reply.code(error.status).send(body(error.status, error.message, error.type, error.param));
    }
    if (error instanceof AdminApiError) {
      const { status, payload } = fromAdminApiError(error);
      if (status >= 500) request.log.warn({ kind: error.kind, status: error.status }, error.message);
      return reply.code(status).send(payload);
    }
    const status = (error as FastifyError).statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send(body(status, error.message, "invalid_request_error", null));
    }
    request.log.error({ err: error }, "unexpected error");
    return reply.code(500).send(body(500, "Internal error in the console.", "internal_error", null));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send(body(404, `No route ${request.method} ${request.url.split("?")[0]}.`, "not_found_error", null)),
  );
}

/**
 * Parses request input with a schema of `@platform/admin-api` or the console's own.
 * @throws ConsoleError 400 `invalid_request_error` naming the first invalid field.
 */
export function parseInput<T>(schema: z.ZodType<T>, data: unknown): T {
  const check = checkRequest(schema, data);
  if (check.ok) return check.value;
  throw invalidRequest(check.message, check.param);
}

/**
 * Parses a form's body (the key and limits dialogs) with a schema whose messages are the console's own words
 * (`@platform/admin-api`'s limit-input.ts, which the browser checks with too): the message is the schema's,
 * unprefixed, as the browser shows it under the field.
 * @throws ConsoleError 400 `invalid_request_error` with the first invalid field as `param`.
 */
export function parseForm<T>(schema: z.ZodType<T>, data: unknown): T {
  const result = schema.safeParse(data ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue === undefined ? null : issue.path.map(String).join(".") || null;
  throw invalidRequest(issue?.message ?? "Invalid request.", param);
}
