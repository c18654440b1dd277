/**
 * The AI gateway (services/gateway), built locally with litellm/config.yaml baked in and the guardrail policy
 * shipped into the container (its environment is listed in the README, "Gateway settings").
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { localImage } from "./build.js";
import { HOST_PORTS } from "./config.js";
import { httpCheck, type ImageSource, type ServiceSpec, serviceContainer } from "./container.js";
import type { ServiceComponentArgs, ServiceFacts } from "./datastores.js";
import { readRepoFile } from "./files.js";

/** The image's working directory; the gateway resolves litellm/ relative to it. */
export const GATEWAY_APP_DIR = "/app";
/** Guardrail policy file of the checkout, copied into the container (a change replaces the container). */
export const POLICY_FILE = "litellm/guardrails/policy.yaml";

/** Inputs of {@link Gateway}. */
export interface GatewayArgs extends ServiceComponentArgs, GatewayLinks {
  dependsOn: pulumi.Resource[];
}

/** Where the gateway reaches the services it calls (inside the network or the namespace). */
export interface GatewayLinks {
  databaseUrl: pulumi.Input<string>;
  redisUrl: pulumi.Input<string>;
  scannerUrl: string;
  analyzerUrl: string;
  anonymizerUrl: string;
  /** Where traces go inside the network (the trace viewer's web container). */
  traceUrl: string;
}

/** The liveness check of the gateway (readiness on Kubernetes: the same port, `/health/readiness`). */
export const GATEWAY_HEALTHCHECK = httpCheck(
  "node",
  `http://127.0.0.1:${HOST_PORTS.gateway}/health/liveliness`,
  {
    // 180 s: the guard scanner may be unreachable on a cold start (its model loads first).
    startPeriod: "180s",
    interval: "15s",
  },
);

/**
 * The gateway's service description, rendered by the Docker target (serviceContainer) and the Kubernetes
 * target (infra/kubernetes/) alike.
 */
export function gatewaySpec(base: ServiceFacts, links: GatewayLinks, image: ImageSource): ServiceSpec {
  const { config, secrets } = base;
  const env = config.env;
  return {
    name: "gateway",
    image,
    env: {
      PORT: String(HOST_PORTS.gateway),
      // Stack setting gatewayWorkers: gateway processes sharing the port (one per core the container may use).
      GATEWAY_WORKERS: String(config.stack.gatewayWorkers),
      GATEWAY_CONFIG: `${GATEWAY_APP_DIR}/litellm/config.yaml`,
      GUARDRAIL_POLICY: `${GATEWAY_APP_DIR}/${POLICY_FILE}`,
      GATEWAY_MASTER_KEY: secrets.gatewayMasterKey,
      // The chat's key: the gateway makes sure it exists and books its calls on the chat user they name.
      CHAT_SERVICE_KEY: secrets.chatServiceKey,
      // GET /metrics needs this bearer token; the stack's Prometheus sends it (infra/monitoring.ts).
      METRICS_TOKEN: secrets.metricsToken,
      // GET /ui redirects operators to the console's admin sign-in.
      CONSOLE_PUBLIC_URL: config.urls.console,
      DATABASE_URL: links.databaseUrl,
      REDIS_URL: links.redisUrl,
      GUARD_SCANNER_API_BASE: env.GUARD_SCANNER_API_BASE ?? links.scannerUrl,
      PII_ANALYZER_API_BASE: links.analyzerUrl,
      PII_ANONYMIZER_API_BASE: links.anonymizerUrl,
      TRACE_HOST: env.TRACE_HOST ?? links.traceUrl,
      TRACE_PUBLIC_KEY: secrets.tracePublicKey,
      TRACE_SECRET_KEY: secrets.traceSecretKey,
      DEFAULT_USER_BUDGET: String(env.DEFAULT_USER_BUDGET),
      DEFAULT_BUDGET_DURATION: env.DEFAULT_BUDGET_DURATION,
      DEFAULT_TPM_LIMIT: String(env.DEFAULT_TPM_LIMIT),
      DEFAULT_RPM_LIMIT: String(env.DEFAULT_RPM_LIMIT),
      // Budget events go here (a secret: a Slack webhook URL carries its token); unset, they are only recorded.
      ...(env.BUDGET_WEBHOOK_URL === undefined
        ? {}
        : { BUDGET_WEBHOOK_URL: pulumi.secret(env.BUDGET_WEBHOOK_URL) }),
      ...Object.fromEntries(Object.entries(config.providerKeys).map(([k, v]) => [k, pulumi.secret(v)])),
    },
    publish: [{ internal: HOST_PORTS.gateway, external: HOST_PORTS.gateway }],
    uploads: [{ file: `${GATEWAY_APP_DIR}/${POLICY_FILE}`, content: readRepoFile(POLICY_FILE) }],
    healthcheck: GATEWAY_HEALTHCHECK,
    shared: true,
  };
}

/** Component `platform:gateway:Gateway`. */
export class Gateway extends pulumi.ComponentResource {
  /** Base URL of the gateway inside the network (the chat's and console's view). */
  readonly internalUrl = `http://gateway:${HOST_PORTS.gateway}`;
  readonly image: docker.Image;
  readonly container: docker.Container;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:gateway:Gateway", name, {}, opts);
    const { ctx } = args;

    this.image = localImage(this, "gateway", "services/gateway/Dockerfile", ctx.platforms.gateway);
    const { container } = serviceContainer(this, ctx, {
      ...gatewaySpec(args, args, { built: this.image }),
      dependsOn: args.dependsOn,
    });
    this.container = container;
    this.registerOutputs({ image: this.image.repoDigest });
  }
}
