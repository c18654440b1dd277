/**
 * Datastores: relational-db (Postgres: gateway keys and spend, trace viewer data in its own database),
 * document-db (MongoDB 4.4: chat data) and cache (Redis: cache, rate limits, trace queues).
 */
import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { PlatformConfig } from "./config.js";
import { type ContainerContext, type ServiceSpec, serviceContainer } from "./container.js";
import { IMAGES } from "./images.js";
import type { SecretName } from "./secrets.js";

/** What every service description reads: the validated settings and the stack's secrets. */
export interface ServiceFacts {
  config: PlatformConfig;
  secrets: Record<SecretName, pulumi.Output<string>>;
}

/** Inputs shared by every service component. */
export interface ServiceComponentArgs extends ServiceFacts {
  ctx: ContainerContext;
}

/** Database user of relational-db and document-db. */
export const DB_USER = "platform";
/** Database of the gateway (relational-db's initial database). */
export const GATEWAY_DB = "gateway";
/** Database of the trace viewer, created on relational-db's first start. */
export const TRACE_DB = "langfuse";

/** A secret made safe for the user-info part of a URL (operator-chosen passwords may hold `@`, `:`, `/`). */
export function urlEncoded(secret: pulumi.Output<string>): pulumi.Output<string> {
  return secret.apply(encodeURIComponent);
}

/** The connection URLs of the stack's own datastores (host names are the service names), all secret. */
export interface DatastoreUrls {
  /** `postgresql://…/gateway` with the generated password (URL-encoded). */
  gatewayDatabaseUrl: pulumi.Output<string>;
  /** `postgresql://…/langfuse` for the trace viewer. */
  traceDatabaseUrl: pulumi.Output<string>;
  /** `mongodb://…/LibreChat?authSource=admin` for the chat and the console's read-only session lookups. */
  mongoUri: pulumi.Output<string>;
  /** `redis://:password@cache:6379`. */
  redisUrl: pulumi.Output<string>;
}

/** {@link DatastoreUrls} from the stack's secrets (Docker network aliases and Kubernetes Services alike). */
export function datastoreUrls(secrets: Record<SecretName, pulumi.Output<string>>): DatastoreUrls {
  const pw = urlEncoded;
  const gatewayDatabaseUrl = pulumi.secret(
    pulumi.interpolate`postgresql://${DB_USER}:${pw(secrets.relationalDbPassword)}@relational-db:5432/${GATEWAY_DB}`,
  );
  const traceDatabaseUrl = pulumi.secret(
    pulumi.interpolate`postgresql://${DB_USER}:${pw(secrets.relationalDbPassword)}@relational-db:5432/${TRACE_DB}`,
  );
  const mongoUri = pulumi.secret(
    pulumi.interpolate`mongodb://${DB_USER}:${pw(secrets.documentDbPassword)}@document-db:27017/LibreChat?authSource=admin`,
  );
  const redisUrl = pulumi.secret(pulumi.interpolate`redis://:${pw(secrets.cachePassword)}@cache:6379`);
  return { gatewayDatabaseUrl, traceDatabaseUrl, mongoUri, redisUrl };
}

/** The relational database (Postgres), both renderers. */
export function relationalDbSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "relational-db",
    image: { pull: img.postgres, tools: IMAGES.postgres.tools },
    env: {
      POSTGRES_USER: DB_USER,
      POSTGRES_PASSWORD: secrets.relationalDbPassword,
      POSTGRES_DB: GATEWAY_DB,
    },
    volumes: { data: "/var/lib/postgresql/data" },
    volumeCredential: { volume: "data", env: "POSTGRES_PASSWORD", setting: "RELATIONAL_DB_PASSWORD" },
    // Runs on the first start only (empty data volume), like every docker-entrypoint-initdb.d script.
    uploads: [
      { file: "/docker-entrypoint-initdb.d/10-trace-db.sql", content: `CREATE DATABASE ${TRACE_DB};\n` },
    ],
    // -h 127.0.0.1: without it pg_isready passes on the init-time unix socket server.
    healthcheck: {
      test: ["CMD", "pg_isready", "-h", "127.0.0.1", "-U", DB_USER, "-d", GATEWAY_DB],
      interval: "10s",
      startPeriod: "30s",
    },
    waitHealthy: true,
  };
}

/** The document database (MongoDB), both renderers. */
export function documentDbSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "document-db",
    image: { pull: img.mongo, tools: IMAGES.mongo.tools },
    env: { MONGO_INITDB_ROOT_USERNAME: DB_USER, MONGO_INITDB_ROOT_PASSWORD: secrets.documentDbPassword },
    volumes: { data: "/data/db" },
    volumeCredential: {
      volume: "data",
      env: "MONGO_INITDB_ROOT_PASSWORD",
      setting: "DOCUMENT_DB_PASSWORD",
    },
    healthcheck: {
      test: ["CMD", "mongo", "--quiet", "--eval", "quit(db.adminCommand('ping').ok ? 0 : 1)"],
      interval: "10s",
    },
    waitHealthy: true,
  };
}

/** The cache (Redis), both renderers. */
export function cacheSpec(base: ServiceFacts): ServiceSpec {
  const { config, secrets } = base;
  const img = config.images;
  return {
    name: "cache",
    image: { pull: img.redis, tools: IMAGES.redis.tools },
    // REDISCLI_AUTH lets redis-cli authenticate without the password on its command line.
    env: { REDISCLI_AUTH: secrets.cachePassword },
    // noeviction: the trace viewer's queues must not lose jobs (Langfuse requirement).
    command: [
      "redis-server",
      "--requirepass",
      secrets.cachePassword,
      "--maxmemory-policy",
      "noeviction",
      "--appendonly",
      "yes",
    ],
    volumes: { data: "/data" },
    // `redis-cli ping` exits 0 on NOAUTH and LOADING too: only PONG means ready.
    healthcheck: { test: ["CMD-SHELL", "redis-cli ping | grep -q PONG"], interval: "10s" },
    waitHealthy: true,
  };
}

/** Component `platform:datastores:Datastores`. */
export class Datastores extends pulumi.ComponentResource {
  /** `postgresql://…/gateway` with the generated password (URL-encoded). */
  readonly gatewayDatabaseUrl: pulumi.Output<string>;
  /** `postgresql://…/langfuse` for the trace viewer. */
  readonly traceDatabaseUrl: pulumi.Output<string>;
  /** `mongodb://…/LibreChat?authSource=admin` for the chat and the console's read-only session lookups. */
  readonly mongoUri: pulumi.Output<string>;
  /** `redis://:password@cache:6379`. */
  readonly redisUrl: pulumi.Output<string>;
  readonly containers: docker.Container[];

  constructor(name: string, args: ServiceComponentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("platform:datastores:Datastores", name, {}, opts);
    const { ctx, secrets } = args;

    const relational = serviceContainer(this, ctx, {
      ...relationalDbSpec(args),
    });

    const document = serviceContainer(this, ctx, {
      ...documentDbSpec(args),
    });

    const cache = serviceContainer(this, ctx, {
      ...cacheSpec(args),
    });

    const urls = datastoreUrls(secrets);
    this.gatewayDatabaseUrl = urls.gatewayDatabaseUrl;
    this.traceDatabaseUrl = urls.traceDatabaseUrl;
    this.mongoUri = urls.mongoUri;
    this.redisUrl = urls.redisUrl;
    this.containers = [relational.container, document.container, cache.container];
    this.registerOutputs({});
  }
}
