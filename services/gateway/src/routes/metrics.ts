/**
 * `GET /metrics`: Prometheus text exposition of the gateway. With METRICS_TOKEN set it needs
 * `Authorization: Bearer <METRICS_TOKEN>` (Prometheus's `authorization` scrape setting; the token is compared in
 * constant time), else 401. Without it only loopback callers (127.0.0.0/8, ::1, ::ffff:127.x; the client
 * address `request.ip`, which honours GATEWAY_TRUSTED_PROXIES) are served and every other gets 403
 * `metrics_token_not_set` saying to set it: the series name key hashes and users, and a gateway listens on
 * 0.0.0.0. Labels carry no upstream URL. With several workers (GATEWAY_WORKERS > 1) the text is the whole
 * gateway's, aggregated by the cluster primary; when the primary cannot collect every worker the answer is 503
 * rather than a partial sum.
 */
import { BlockList, isIP } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { digestOf, presentsSecret } from "../auth/bearer.js";
import { GatewayError } from "../errors/gateway-error.js";

export interface MetricsRouteOptions {
  /** This process's registry. */
  registry: Registry;
  /** The cluster's aggregated text, when this process is one of several workers. */
  cluster?: (() => Promise<string>) | undefined;
  /** METRICS_TOKEN: the bearer token a scrape must send; undefined = only loopback callers are served. */
  token?: string | undefined;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Whether `address` (IPv4, IPv6 or IPv4-mapped IPv6) is a loopback address: 127.0.0.0/8 or ::1. */
export function isLoopback(address: string): boolean {
  // BlockList matches an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) against its IPv4 subnets itself.
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? "ipv6" : "ipv4");
}

/** The start-up line of a gateway without METRICS_TOKEN. */
export const METRICS_TOKEN_UNSET_NOTE =
  "METRICS_TOKEN is not set: GET /metrics answers loopback callers (127.0.0.1, ::1) only and 403 to every other " +
  "address; set METRICS_TOKEN and give it to Prometheus as the scrape's bearer credentials";

export async function metricsRoutes(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const { registry, cluster } = options;
  const expected = options.token === undefined ? undefined : digestOf(options.token);
  app.get("/metrics", { config: { public: true } }, async (request, reply) => {
    if (expected === undefined && !isLoopback(request.ip)) {
      throw new GatewayError(
        403,
        "GET /metrics is served to loopback callers only while METRICS_TOKEN is not set: set METRICS_TOKEN on the gateway and scrape with Authorization: Bearer <METRICS_TOKEN>.",
        { type: "permission_error", code: "metrics_token_not_set" },
      );
    }
    if (expected !== undefined && !presentsSecret(request.headers.authorization, expected)) {
      throw new GatewayError(
        401,
        "GET /metrics needs Authorization: Bearer <METRICS_TOKEN> (set in Prometheus's scrape config as authorization credentials).",
        { type: "authentication_error", code: "invalid_metrics_token" },
      );
    }
    if (cluster === undefined) return reply.type(registry.contentType).send(await registry.metrics());
    let text: string;
    try {
      text = await cluster();
    } catch (error) {
      throw new GatewayError(503, `metrics unavailable: ${(error as Error).message}`, {
        type: "service_unavailable",
        cause: error,
      });
    }
    return reply.type(registry.contentType).send(text);
  });
}
