/**
 * The stack's settings, read and validated in one place.
 *
 * Two sources: the Pulumi stack config (`Pulumi.<stack>.yaml`, namespace `platform`: where and how to deploy)
 * and the operator's `.env` at the repository root (secrets and operator variables, listed in `.env.example`). A `.env`
 * value that is empty or the placeholder `replace-me` counts as unset: the stack then generates the secret.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import { REPO_ROOT } from "./files.js";
import { IMAGES, type ImageKey } from "./images.js";

/** The stack's containers (docs/architecture.md, "The stack"); each name is the container name and its network alias. */
export const SERVICES = [
  "chat",
  "console",
  "gateway",
  "trace-web",
  "trace-worker",
  "metrics",
  "dashboards",
  "alertmanager",
  "relational-db",
  "document-db",
  "cache",
  "analytics-db",
  "object-store",
  "object-store-init",
  "pii-analyzer",
  "pii-anonymizer",
  "scanner",
  "relational-db-exporter",
  "cache-exporter",
] as const;

/** A container of the stack. */
export type ServiceName = (typeof SERVICES)[number];

/** Host ports, the only ones the stack publishes (besides 80/443 of the vm reverse proxy). */
export const HOST_PORTS = {
  chat: 3080,
  console: 3001,
  gateway: 4000,
  "trace-web": 3000,
  metrics: 9090,
  dashboards: 3030,
  alertmanager: 9093,
} as const satisfies Partial<Record<ServiceName, number>>;

/** Subdomains the vm reverse proxy serves (metrics and alertmanager have no login: loopback only). */
export const PUBLIC_HOSTS = {
  chat: "chat",
  console: "console",
  gateway: "gateway",
  "trace-web": "trace",
  dashboards: "dashboards",
} as const satisfies Partial<Record<keyof typeof HOST_PORTS, string>>;

/** The placeholder `.env.example` ships for every secret. */
export const PLACEHOLDER = "replace-me";

const unsetIfPlaceholder = (v: string | undefined) =>
  v === undefined || v.trim() === "" || v.trim() === PLACEHOLDER ? undefined : v;
const optional = z.string().optional().transform(unsetIfPlaceholder);
const hexOf = (chars: number) =>
  optional.refine((v) => v === undefined || new RegExp(`^[0-9a-fA-F]{${chars}}$`).test(v), {
    message: `must be ${chars} hexadecimal characters`,
  });
/** A number from `.env` text (`def` when unset), then checked by `check`. */
const numberFrom = (def: number, check: z.ZodNumber) =>
  optional.transform((v) => (v === undefined ? def : Number(v))).pipe(check);
const positiveInt = (def: number) => numberFrom(def, z.number().int().positive());
/**
 * Characters Langfuse's web entrypoint cannot pass through to its ClickHouse migration URL (it puts
 * CLICKHOUSE_PASSWORD into a query string unencoded: langfuse/langfuse web/entrypoint.sh).
 */
const CLICKHOUSE_URL_UNSAFE = /[&=#?%+@\s]/;

/** Schema of the operator's `.env` (the variables of `.env.example` plus the overridable internal secrets). */
export const operatorEnvSchema = z.object({
  GATEWAY_MASTER_KEY: optional.refine((v) => v === undefined || v.startsWith("sk-"), {
    message: "must start with sk-",
  }),
  /** The chat's gateway key; generated unless pinned (the gateway creates the key from this value). */
  /** The bearer token the gateway's /metrics requires (the stack's Prometheus sends it). */
  METRICS_TOKEN: optional,
  CHAT_SERVICE_KEY: optional.refine((v) => v === undefined || (v.startsWith("sk-") && v.length >= 20), {
    message: "must start with sk- and be at least 20 characters long",
  }),
  /** Langfuse refuses to create a user with a shorter password (and the trace viewer would not start). */
  TRACE_INIT_USER_PASSWORD: optional.refine((v) => v === undefined || v.length >= 8, {
    message: "must be at least 8 characters long (the trace viewer refuses shorter passwords)",
  }),
  DASHBOARD_ADMIN_USER: optional.transform((v) => v ?? "admin"),
  DASHBOARD_ADMIN_PASSWORD: optional,
  COOKIE_DOMAIN: optional,
  COOKIE_SAMESITE: optional.refine((v) => v === undefined || v.toLowerCase() === "lax", {
    message: "must be lax (strict blocks the console on another subdomain)",
  }),
  JWT_REFRESH_SECRET: optional,
  SHARED_NETWORK: optional,
  ADMIN_SESSION_IDLE_TIMEOUT_MS: positiveInt(30 * 60 * 1000),
  TRACE_HOST: optional.pipe(z.url().optional()),
  TRACE_PUBLIC_KEY: optional,
  TRACE_SECRET_KEY: optional,
  GUARD_SCANNER_API_BASE: optional.pipe(z.url().optional()),
  /** Where the alertmanager posts alerts (its webhook receiver); unset: alerts are listed in alertmanager only. */
  ALERT_WEBHOOK_URL: optional.pipe(z.url().optional()),
  /**
   * Where the gateway POSTs budget events (80 % reached, budget exceeded; docs/limits.md); unset: recorded, not
   * sent. A secret: a Slack incoming-webhook URL carries its token.
   */
  BUDGET_WEBHOOK_URL: optional.pipe(z.url({ protocol: /^https?$/ }).optional()),
  AGENTS_URL: optional.pipe(z.url().optional()),
  CONSOLE_TAG: optional.transform((v) => v ?? "main"),
  DEFAULT_USER_BUDGET: numberFrom(10, z.number().nonnegative()),
  DEFAULT_BUDGET_DURATION: optional
    .refine((v) => v === undefined || /^\d+[smhd]$/.test(v), {
      message: "must look like 30s, 30m, 30h or 30d",
    })
    .transform((v) => v ?? "30d"),
  DEFAULT_TPM_LIMIT: positiveInt(10000),
  DEFAULT_RPM_LIMIT: positiveInt(60),
  /** A team new console users join as members (the console's DEFAULT_TEAM_ID); unset: none. */
  DEFAULT_TEAM_ID: optional,
  /**
   * kubernetes: the operator's managed Postgres (server URL with credentials; the stack uses its databases
   * `gateway` and `langfuse`), Redis and MongoDB (URL with its database). Unset: in-cluster StatefulSets.
   */
  MANAGED_POSTGRES_URL: optional.pipe(z.url().optional()),
  MANAGED_REDIS_URL: optional.pipe(z.url().optional()),
  MANAGED_MONGODB_URL: optional.pipe(z.url().optional()),
  /** Personal access token (read:packages) for private images; see the `registryUsername` stack setting. */
  REGISTRY_TOKEN: optional,
  // Internal secrets: generated unless the operator pins them.
  JWT_SECRET: optional,
  CREDS_KEY: hexOf(64),
  CREDS_IV: hexOf(32),
  RELATIONAL_DB_PASSWORD: optional,
  DOCUMENT_DB_PASSWORD: optional,
  CACHE_PASSWORD: optional,
  ANALYTICS_DB_PASSWORD: optional.refine((v) => v === undefined || !CLICKHOUSE_URL_UNSAFE.test(v), {
    message:
      "must not contain & = # ? % + @ or spaces (the trace viewer's ClickHouse migration cannot pass them)",
  }),
  /** MinIO's root password (its secret key): MinIO refuses one under 8 characters and does not start. */
  OBJECT_STORE_PASSWORD: optional.refine((v) => v === undefined || v.length >= 8, {
    message: "must be at least 8 characters long (the object store refuses shorter root passwords)",
  }),
  TRACE_SALT: optional,
  TRACE_ENCRYPTION_KEY: hexOf(64),
  TRACE_NEXTAUTH_SECRET: optional,
});

/** The validated `.env`. */
export type OperatorEnv = z.infer<typeof operatorEnvSchema>;

const serviceName = z.enum(SERVICES);
const imageKey = z.enum(Object.keys(IMAGES) as [ImageKey, ...ImageKey[]]);

/** Schema of the Pulumi stack config (namespace `platform`); defaults are the local stack's. */
export const stackConfigSchema = z
  .object({
    /**
     * `local`: the local Docker daemon. `vm`: a remote amd64 host over SSH, public domain, HTTPS.
     * `kubernetes`: a cluster from the operator's kubeconfig, public domain through an Ingress (docs/kubernetes.md).
     */
    target: z.enum(["local", "vm", "kubernetes"]).default("local"),
    /** kubernetes: path of the kubeconfig (default: KUBECONFIG or ~/.kube/config) and its context (default: current). */
    kubeconfig: z.string().optional(),
    kubeContext: z.string().optional(),
    /** kubernetes: the namespace the stack creates and runs in. */
    namespace: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, "must be a DNS label (lowercase letters, digits, -)")
      .default("platform"),
    /**
     * kubernetes: registry (and path) our images (gateway, console, scanner) are pushed to and pulled from,
     * e.g. `ghcr.io/acme/platform`; the cluster cannot see images built on this machine.
     */
    imageRegistry: z.string().optional(),
    /**
     * kubernetes: name of a `kubernetes.io/dockerconfigjson` Secret in the namespace that every pod pulls its
     * images with (`imagePullSecrets`), for a private registry. The stack creates it from `registryUsername` and
     * REGISTRY_TOKEN when both are set; otherwise the operator creates it (`kubectl create secret docker-registry`).
     */
    imagePullSecret: z
      .string()
      .regex(
        /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/,
        "must be a Kubernetes object name (lowercase letters, digits, - and .)",
      )
      .optional(),
    /** kubernetes: IngressClass of the Ingress, and the namespace its controller runs in (NetworkPolicies). */
    ingressClassName: z.string().default("nginx"),
    ingressNamespace: z.string().default("ingress-nginx"),
    /** kubernetes: cert-manager ClusterIssuer filling the TLS Secret; unset: the operator provides the Secret. */
    clusterIssuer: z.string().optional(),
    tlsSecretName: z.string().default("platform-tls"),
    /** kubernetes: StorageClass of the data PersistentVolumeClaims (default: the cluster's default class). */
    storageClassName: z.string().optional(),
    /** kubernetes: gateway replicas (HorizontalPodAutoscaler bounds) and the average CPU utilisation it aims at. */
    gatewayMinReplicas: z.number().int().min(1).default(2),
    gatewayMaxReplicas: z.number().int().min(1).default(6),
    gatewayCpuTargetPercent: z.number().int().min(10).max(100).default(70),
    /** Docker host, e.g. `ssh://user@host`; unset means the local daemon (DOCKER_HOST). */
    dockerHost: z.string().optional(),
    /** Extra `ssh` flags for an ssh:// docker host. */
    sshOpts: z.array(z.string()).default([]),
    /** Public domain of the vm stack: apps at chat.<domain>, console.<domain>, gateway.<domain>, ... */
    domain: z.string().optional(),
    /** ACME account e-mail for the vm stack's certificates. */
    acmeEmail: z.email().optional(),
    /** Host address the seven published ports bind to (loopback unless told otherwise). */
    bindAddress: z.union([z.ipv4(), z.ipv6()]).default("127.0.0.1"),
    /** Per-service platform, e.g. `{chat: linux/amd64, console: linux/amd64}` on arm64 hosts (the chat image is amd64-only). */
    platforms: z.partialRecord(serviceName, z.string().regex(/^linux\/[a-z0-9]+(\/v\d)?$/)).default({}),
    /** Replacement image references (e.g. digest pins), keyed like IMAGES in infra/images.ts. */
    images: z.partialRecord(imageKey, z.string().min(1)).default({}),
    /** Prebuilt console image repository; when set it is pulled as `<repository>:<CONSOLE_TAG>`, not built. */
    consoleImage: z.string().optional(),
    /** Registry of the private images and its user; the token is REGISTRY_TOKEN in `.env`. */
    registryAddress: z.string().default("ghcr.io"),
    registryUsername: z.string().optional(),
    /** Memory caps in MiB for the services known to run out of memory (analytics database, trace worker). */
    analyticsDbMemoryMb: z.number().int().min(512).default(3072),
    traceWorkerMemoryMb: z.number().int().min(256).default(1536),
    /**
     * Gateway processes in the gateway container (its GATEWAY_WORKERS): one per core the container may use;
     * 1 runs the gateway as a single process.
     */
    gatewayWorkers: z.number().int().min(1).max(64).default(1),
    /** Login of the trace viewer's initial admin user. */
    traceAdminEmail: z.email().default("admin@platform.local"),
    /**
     * `true`: `pulumi destroy` deletes the data volumes too (run `pulumi up` once after setting it, destroy
     * reads the option from the state). Default: volumes outlive destroy (docs/operations.md).
     */
    dropVolumesOnDestroy: z.boolean().default(false),
  })
  .superRefine((c, ctx) => {
    if (c.target === "kubernetes") {
      if (!c.domain)
        ctx.addIssue({ code: "custom", path: ["domain"], message: "the kubernetes stack needs a domain" });
      if (!c.imageRegistry)
        ctx.addIssue({
          code: "custom",
          path: ["imageRegistry"],
          message: "the kubernetes stack needs a registry to push its images to, e.g. ghcr.io/acme/platform",
        });
      if (c.gatewayMinReplicas > c.gatewayMaxReplicas)
        ctx.addIssue({
          code: "custom",
          path: ["gatewayMinReplicas"],
          message: "must not exceed gatewayMaxReplicas",
        });
    }
    if (c.target !== "vm") return;
    if (!c.dockerHost?.startsWith("ssh://"))
      ctx.addIssue({ code: "custom", path: ["dockerHost"], message: "the vm stack needs ssh://user@host" });
    if (!c.domain) ctx.addIssue({ code: "custom", path: ["domain"], message: "the vm stack needs a domain" });
  });

/** The validated stack config. */
export type StackConfig = z.infer<typeof stackConfigSchema>;

/** Public URLs of the stack. */
export interface PlatformUrls {
  chat: string;
  console: string;
  gateway: string;
  /** `{gateway_url}/v1`, what OpenAI clients use. */
  gatewayApi: string;
  trace: string;
  dashboards: string;
  metrics: string;
  alertmanager: string;
}

/** Everything the program needs, validated: the stack config, the `.env`, and values derived from both. */
export interface PlatformConfig {
  stack: StackConfig;
  env: OperatorEnv;
  /** `<PROVIDER>_API_KEY` entries of `.env` with a value, handed to the gateway. */
  providerKeys: Record<string, string>;
  urls: PlatformUrls;
  /** Cookie domain shared by chat and console: `localhost` locally, `.<domain>` on the vm. */
  cookieDomain: string;
  /** Image reference per role, after the `images` overrides. */
  images: Record<ImageKey, string>;
}

/** Raised for invalid settings; the message lists every problem with its source and key. */
export class PlatformConfigError extends Error {
  override name = "PlatformConfigError";
}

function fail(source: string, error: z.ZodError): never {
  const lines = error.issues.map((i) => `  ${source} ${i.path.join(".") || "(root)"}: ${i.message}`);
  throw new PlatformConfigError(`invalid platform settings:\n${lines.join("\n")}`);
}

/**
 * Validates raw settings and derives URLs, cookie domain and images.
 * @param rawStack the stack config as read from Pulumi (unknown keys ignored; see {@link stackConfigSchema}).
 * @param rawEnv the parsed `.env` (variable name to value).
 * @throws PlatformConfigError listing every invalid key.
 */
export function parseConfig(rawStack: unknown, rawEnv: Record<string, string>): PlatformConfig {
  const stackResult = stackConfigSchema.safeParse(rawStack);
  if (!stackResult.success) fail("stack config", stackResult.error);
  const envResult = operatorEnvSchema.safeParse(rawEnv);
  if (!envResult.success) fail(".env", envResult.error);
  const stack = stackResult.data;
  const env = envResult.data;

  const providerKeys: Record<string, string> = {};
  for (const [key, value] of Object.entries(rawEnv)) {
    const v = unsetIfPlaceholder(value);
    if (/^[A-Z][A-Z0-9_]*_API_KEY$/.test(key) && v !== undefined) providerKeys[key] = v;
  }

  const domain = stack.domain ?? "";
  const publicUrl = (service: keyof typeof HOST_PORTS): string => {
    const sub = (PUBLIC_HOSTS as Partial<Record<string, string>>)[service];
    return stack.target !== "local" && sub
      ? `https://${sub}.${domain}`
      : `http://localhost:${HOST_PORTS[service]}`;
  };
  const urls: PlatformUrls = {
    chat: publicUrl("chat"),
    console: publicUrl("console"),
    gateway: publicUrl("gateway"),
    gatewayApi: `${publicUrl("gateway")}/v1`,
    trace: publicUrl("trace-web"),
    dashboards: publicUrl("dashboards"),
    metrics: publicUrl("metrics"),
    alertmanager: publicUrl("alertmanager"),
  };

  const cookieDomain = env.COOKIE_DOMAIN ?? (stack.target !== "local" ? `.${domain}` : "localhost");
  if (stack.target !== "local" && !(cookieDomain.startsWith(".") && `.${domain}`.endsWith(cookieDomain))) {
    throw new PlatformConfigError(
      `invalid platform settings:\n  .env COOKIE_DOMAIN: ${cookieDomain} must be a leading-dot parent of ${domain}`,
    );
  }

  const images = Object.fromEntries(
    Object.entries(IMAGES).map(([key, image]) => [key, stack.images[key as ImageKey] ?? image.ref]),
  ) as Record<ImageKey, string>;

  return { stack, env, providerKeys, urls, cookieDomain, images };
}

/** The stack config keys {@link loadConfig} reads; objects and arrays are read as structured config. */
const STRUCTURED_KEYS = ["sshOpts", "platforms", "images"] as const;
const NUMBER_KEYS = [
  "analyticsDbMemoryMb",
  "traceWorkerMemoryMb",
  "gatewayWorkers",
  "gatewayMinReplicas",
  "gatewayMaxReplicas",
  "gatewayCpuTargetPercent",
] as const;
const BOOLEAN_KEYS = ["dropVolumesOnDestroy"] as const;
const STRING_KEYS = [
  "target",
  "dockerHost",
  "domain",
  "acmeEmail",
  "bindAddress",
  "consoleImage",
  "registryAddress",
  "registryUsername",
  "traceAdminEmail",
  "kubeconfig",
  "kubeContext",
  "namespace",
  "imageRegistry",
  "imagePullSecret",
  "ingressClassName",
  "ingressNamespace",
  "clusterIssuer",
  "tlsSecretName",
  "storageClassName",
] as const;

/**
 * Reads the current stack's config and the repository's `.env` (absent file: empty) and validates both.
 * @param envFile path of the operator's `.env`; defaults to the repository root's.
 * @throws PlatformConfigError listing every invalid key.
 */
export function loadConfig(envFile: string = path.join(REPO_ROOT, ".env")): PlatformConfig {
  const cfg = new pulumi.Config("platform");
  const raw: Record<string, unknown> = {};
  for (const key of STRING_KEYS) raw[key] = cfg.get(key);
  for (const key of NUMBER_KEYS) raw[key] = cfg.getNumber(key);
  for (const key of BOOLEAN_KEYS) raw[key] = cfg.getBoolean(key);
  for (const key of STRUCTURED_KEYS) raw[key] = cfg.getObject(key);
  const env = existsSync(envFile) ? parseDotenv(readFileSync(envFile, "utf8")) : {};
  return parseConfig(raw, env);
}
