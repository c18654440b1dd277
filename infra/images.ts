/**
 * Every third-party image of the stack, pinned, with the binaries its health check may rely on.
 *
 * `tools` lists what exists inside the image (checked against each image's own Dockerfile or docs); `serviceContainer` refuses a health check whose program is not listed, so a
 * probe that cannot run inside its image fails at `pulumi preview`, not as a container stuck "unhealthy".
 */

/** A program a health check can execute inside a container. `sh` means CMD-SHELL probes work. */
export type ProbeTool = "sh" | "wget" | "curl" | "node" | "pg_isready" | "redis-cli" | "mongo" | "grep";

/** A pinned image reference and the programs available inside it. */
export interface PinnedImage {
  /** Image reference with an explicit version tag (never `latest`, except where noted). */
  ref: string;
  tools: readonly ProbeTool[];
}

/** The third-party images, keyed by the role they play. Change a version here and nowhere else. */
export const IMAGES = {
  /**
   * The official `postgres:17` (Debian) with pgvector added (pgvector's Dockerfile: `FROM postgres:$PG_MAJOR`,
   * then `make install` of the extension): the same entrypoint, user 999 and tools, and the same Postgres major
   * (its data folder stays readable); `vector` is there for the gateway's semantic response cache.
   */
  postgres: { ref: "pgvector/pgvector:pg17", tools: ["sh", "grep", "pg_isready"] },
  /** Debian-based; redis-cli reads the password from REDISCLI_AUTH. */
  redis: { ref: "redis:7.2", tools: ["sh", "grep", "redis-cli"] },
  /** Last 4.4 release: MongoDB 5.0+ needs AVX, which the target VM lacks. Legacy `mongo` shell. */
  mongo: { ref: "mongo:4.4.30", tools: ["sh", "grep", "mongo"] },
  /** Ubuntu-based with GNU wget (and clickhouse-client); user clickhouse is uid/gid 101. Langfuse v4 needs >= 25.12. */
  clickhouse: { ref: "clickhouse/clickhouse-server:25.12", tools: ["sh", "wget"] },
  /**
   * Chainguard's source build of MinIO (Docker Hub's minio images are gone). The free tier serves only
   * `latest*` tags; the `-dev` variant adds busybox (wget) and a shell. (Langfuse's compose probes the plain one
   * with `mc ready local`, and Chainguard's image definition installs `mc` beside the server; wget is not in it.)
   * Pin a digest with the `images` stack setting for production.
   */
  minio: { ref: "cgr.dev/chainguard/minio:latest-dev", tools: ["sh", "wget"] },
  /** MinIO client, entrypoint `mc`; used once to create the trace bucket. */
  minioClient: { ref: "cgr.dev/chainguard/minio-client:latest", tools: [] },
  /** Langfuse v4 web and worker, pinned to one version; busybox wget, no curl. */
  langfuseWeb: { ref: "langfuse/langfuse:4.52.0", tools: ["sh", "wget"] },
  langfuseWorker: { ref: "langfuse/langfuse-worker:4.52.0", tools: ["sh", "wget"] },
  /** Presidio from its maintained registry (the MCR images are no longer updated); both ship curl. */
  presidioAnalyzer: { ref: "ghcr.io/data-privacy-stack/presidio-analyzer:2.2.364", tools: ["sh", "curl"] },
  presidioAnonymizer: {
    ref: "ghcr.io/data-privacy-stack/presidio-anonymizer:2.2.364",
    tools: ["sh", "curl"],
  },
  /** Busybox-based: wget, no curl. */
  prometheus: { ref: "prom/prometheus:v3.15.0", tools: ["sh", "wget"] },
  alertmanager: { ref: "prom/alertmanager:v0.34.1", tools: ["sh", "wget"] },
  /** `grafana/grafana` (grafana-oss is no longer updated); alpine-based with curl. */
  grafana: { ref: "grafana/grafana:13.2.3", tools: ["sh", "curl", "wget"] },
  /** Busybox-based: wget. */
  postgresExporter: { ref: "quay.io/prometheuscommunity/postgres-exporter:v0.20.1", tools: ["sh", "wget"] },
  /** The `-alpine` variant: the plain tag is FROM scratch, without a shell or wget. */
  redisExporter: { ref: "oliver006/redis_exporter:v1.89.0-alpine", tools: ["sh", "wget"] },
  /**
   * LibreChat, the version `librechat-data-provider@0.8.524` was built for (its `Constants.VERSION`);
   * chat-app.yaml's `version` must equal that package's `Constants.CONFIG_VERSION`. Node-based (alpine).
   */
  librechat: { ref: "ghcr.io/danny-avila/librechat:v0.8.8-rc4", tools: ["sh", "wget", "node"] },
  /** HTTPS reverse proxy of the vm stack; alpine, busybox wget. */
  caddy: { ref: "caddy:2.11.4-alpine", tools: ["sh", "wget"] },
} as const satisfies Record<string, PinnedImage>;

/** Key of {@link IMAGES}. */
export type ImageKey = keyof typeof IMAGES;

/** Programs inside the images this repository builds (node:24 alpine based Dockerfiles). */
export const LOCAL_IMAGE_TOOLS: readonly ProbeTool[] = ["sh", "wget", "node"];
