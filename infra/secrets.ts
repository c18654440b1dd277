/**
 * Every secret of the stack: the operator's `.env` value when set, otherwise a @pulumi/random value kept in
 * the stack's state (stable across runs: values already present are kept).
 */
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { OperatorEnv } from "./config.js";

/** How a secret is generated when `.env` leaves it unset. */
type SecretKind =
  | { kind: "password"; length: number; prefix?: string }
  /** `bytes` random bytes as lowercase hex (2 × bytes characters). */
  | { kind: "hex"; bytes: number };

/** Every secret: its `.env` variable and how to generate it. */
export const SECRET_SPECS = {
  gatewayMasterKey: { env: "GATEWAY_MASTER_KEY", kind: "password", length: 48, prefix: "sk-" },
  /** The chat's own gateway key (a virtual key the gateway ensures at start-up; it names the chat user). */
  chatServiceKey: { env: "CHAT_SERVICE_KEY", kind: "password", length: 48, prefix: "sk-" },
  /** The bearer token the gateway's /metrics requires; the stack's Prometheus sends it. */
  metricsToken: { env: "METRICS_TOKEN", kind: "password", length: 40 },
  jwtSecret: { env: "JWT_SECRET", kind: "password", length: 64 },
  jwtRefreshSecret: { env: "JWT_REFRESH_SECRET", kind: "password", length: 64 },
  credsKey: { env: "CREDS_KEY", kind: "hex", bytes: 32 },
  credsIv: { env: "CREDS_IV", kind: "hex", bytes: 16 },
  traceInitUserPassword: { env: "TRACE_INIT_USER_PASSWORD", kind: "password", length: 24 },
  dashboardAdminPassword: { env: "DASHBOARD_ADMIN_PASSWORD", kind: "password", length: 24 },
  relationalDbPassword: { env: "RELATIONAL_DB_PASSWORD", kind: "password", length: 32 },
  documentDbPassword: { env: "DOCUMENT_DB_PASSWORD", kind: "password", length: 32 },
  cachePassword: { env: "CACHE_PASSWORD", kind: "password", length: 32 },
  analyticsDbPassword: { env: "ANALYTICS_DB_PASSWORD", kind: "password", length: 32 },
  objectStorePassword: { env: "OBJECT_STORE_PASSWORD", kind: "password", length: 32 },
  traceSalt: { env: "TRACE_SALT", kind: "password", length: 32 },
  traceEncryptionKey: { env: "TRACE_ENCRYPTION_KEY", kind: "hex", bytes: 32 },
  traceNextauthSecret: { env: "TRACE_NEXTAUTH_SECRET", kind: "password", length: 48 },
  tracePublicKey: { env: "TRACE_PUBLIC_KEY", kind: "password", length: 32, prefix: "pk-lf-" },
  traceSecretKey: { env: "TRACE_SECRET_KEY", kind: "password", length: 32, prefix: "sk-lf-" },
} as const satisfies Record<string, { env: keyof OperatorEnv } & SecretKind>;

/** Name of a secret of {@link SECRET_SPECS}. */
export type SecretName = keyof typeof SECRET_SPECS;

/** Inputs of {@link Secrets}. */
export interface SecretsArgs {
  /** The validated `.env`; a set variable wins over generation. */
  env: OperatorEnv;
}

/**
 * Component `platform:secrets:Secrets`: one secret output per {@link SECRET_SPECS} entry. Only unset secrets
 * get a random resource (named like the secret, kebab-case), so pinning a value in `.env` later simply
 * drops the generated one.
 */
export class Secrets extends pulumi.ComponentResource {
  /** Secret values by name, all marked secret. */
  readonly values: Record<SecretName, pulumi.Output<string>>;

  constructor(name: string, args: SecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:secrets:Secrets", name, {}, opts);
    const values = {} as Record<SecretName, pulumi.Output<string>>;
    for (const [key, spec] of Object.entries(SECRET_SPECS) as [
      SecretName,
      (typeof SECRET_SPECS)[SecretName],
    ][]) {
      const given = args.env[spec.env];
      values[key] = pulumi.secret(
        given !== undefined ? pulumi.output(String(given)) : this.generate(key, spec),
      );
    }
    this.values = values;
    this.registerOutputs({});
  }

  private generate(key: string, spec: SecretKind): pulumi.Output<string> {
    const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (spec.kind === "hex")
      return new random.RandomBytes(name, { length: spec.bytes }, { parent: this }).hex;
    // Letters and digits only: the values go into URLs (DATABASE_URL, REDIS_URL) and shell-free env files.
    const password = new random.RandomPassword(
      name,
      { length: spec.length, special: false },
      { parent: this },
    );
    return spec.prefix ? pulumi.interpolate`${spec.prefix}${password.result}` : password.result;
  }
}
