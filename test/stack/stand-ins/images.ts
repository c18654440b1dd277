/**
 * Stand-ins for the stack's third-party images (no registry is reachable from the rehearsal's machine), each
 * tagged with the exact reference infra/images.ts pins, so the containers are created with the declared image.
 *
 * Real programs from Debian bookworm (older versions than pinned, same command-line and environment contracts):
 *   postgres (postgresql 15, with an entrypoint applying POSTGRES_USER / _PASSWORD / _DB and
 *   /docker-entrypoint-initdb.d as the official image does; without pgvector, which Debian does not package for
 *   15: the rehearsal's gateway does not configure the semantic response cache, the one user of `vector`, and
 *   migration 14 skips its table where the extension is missing), redis (redis-server 7.0), prometheus, alertmanager
 *   (prometheus-alertmanager), postgresExporter (prometheus-postgres-exporter), redisExporter
 *   (prometheus-redis-exporter), caddy.
 * Contract fakes from test/fixtures (./server.ts): mongo (MongoDB 4.4 wire fake, a `mongo` shell for its
 *   health check, and `mongodump` / `mongorestore` that copy the fake's data file for platform.sh backup), langfuseWeb (Langfuse fake), presidioAnalyzer and presidioAnonymizer (Presidio fake),
 *   librechat (answers /health only when MONGO_URI authenticates and its CONFIG_PATH file exists),
 *   minioClient (`mc mb` against the MinIO stand-in, with MC_HOST_<alias>'s credentials).
 * Health-check-only stand-ins: grafana, clickhouse (also accepts TCP on its native port 9000), minio (also
 *   creates buckets for `mc` when the credentials match MINIO_ROOT_USER / _PASSWORD), langfuseWorker. Each
 *   answers its health path only when the variables the real service needs are set and the URLs it connects to
 *   accept connections.
 *
 * All are built FROM one Debian image with every package installed (the stand-in rootfs of test/images plus
 * apt-get), kept in the private engine's data root: Docker's build cache makes a second run reuse them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { IMAGES, type ImageKey } from "../../../infra/images.js";
import { importStandIn } from "../../images/base-images.js";
import type { DockerEngine } from "../../images/engine.js";
import type { StandInRole } from "./server.js";

const NODE_BASE = `platform-stand-in/node-bookworm:${process.version}`;
/**
 * The operator's model server (no part of the stack, see ../operator.ts): the contract fake of an
 * OpenAI-compatible upstream (test/fixtures/openai-upstream.ts) on MODEL_SERVER_PORT, `GET /health` for its
 * health; UPSTREAM_API_KEY in its environment is the bearer token it requires.
 */
export const MODEL_SERVER_IMAGE = "platform-stand-in/openai-upstream:latest";
/** Port of {@link MODEL_SERVER_IMAGE}. */
export const MODEL_SERVER_PORT = 8080;
/**
 * The operator's MCP server (no part of the stack either, see ../operator.ts): the tests' MCP server made with
 * the official SDK (test/helpers/mcp-server.ts: tools `echo`, `add`, …) answering Streamable HTTP on
 * `/mcp` of MCP_SERVER_PORT, `GET /health` for its health.
 */
export const MCP_SERVER_IMAGE = "platform-stand-in/mcp-server:latest";
/** Port of {@link MCP_SERVER_IMAGE}. */
export const MCP_SERVER_PORT = 8080;
const TOOLS = "platform-stand-in/debian-tools:latest";
const PACKAGES = [
  "postgresql",
  "redis-server",
  "prometheus",
  "prometheus-alertmanager",
  "prometheus-postgres-exporter",
  "prometheus-redis-exporter",
  "caddy",
  "wget",
  "curl",
  "procps",
];

const PG_BIN = "/usr/lib/postgresql/15/bin";

/** The official postgres image's first-start contract, for Debian's postgresql. */
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -e
export PGDATA="\${PGDATA:-/var/lib/postgresql/data}"
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "$POSTGRES_PASSWORD" ] || { echo "postgres stand-in: POSTGRES_PASSWORD is not set" >&2; exit 1; }
  user="\${POSTGRES_USER:-postgres}"; db="\${POSTGRES_DB:-$user}"
  pw="$(mktemp)"; printf '%s\\n' "$POSTGRES_PASSWORD" > "$pw"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pw"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  [ "$db" = postgres ] || psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -c "CREATE DATABASE \\"$db\\""
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sql) psql -v ON_ERROR_STOP=1 -U "$user" -d "$db" -f "$f" ;;
      *.sh) . "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
`;

/** The official redis image's entrypoint: drops to the redis user for redis-server. */
const REDIS_ENTRYPOINT = `#!/bin/sh
set -e
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
  chown -R redis:redis .
  exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"
`;

/** A command of the mongo image run by the stand-in program in `role`. */
const mongoTool = (role: string) => `#!/bin/sh
STAND_IN='{"role":"${role}"}' exec node /opt/stand-in/server.mjs "$@"
`;

/** Files of the build context, by name. */
const SCRIPTS: Record<string, string> = {
  "postgres-entrypoint.sh": POSTGRES_ENTRYPOINT,
  "redis-entrypoint.sh": REDIS_ENTRYPOINT,
  mongo: mongoTool("mongo-shell"),
  mongodump: mongoTool("mongodump"),
  mongorestore: mongoTool("mongorestore"),
};

const LANGFUSE_NEEDS = ["SALT", "ENCRYPTION_KEY", "NEXTAUTH_URL", "CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD"];
const LANGFUSE_REQUIRES = [
  "DATABASE_URL",
  "CLICKHOUSE_URL",
  "CLICKHOUSE_MIGRATION_URL",
  "REDIS_CONNECTION_STRING",
  "LANGFUSE_S3_EVENT_UPLOAD_ENDPOINT",
];

function node(role: StandInRole, user: string, dirs: string[] = []): string {
  return [
    ...(dirs.length > 0 ? [`RUN mkdir -p ${dirs.join(" ")} && chown ${user} ${dirs.join(" ")}`] : []),
    "COPY server.mjs /opt/stand-in/server.mjs",
    `ENV STAND_IN=${JSON.stringify(JSON.stringify(role))}`,
    `USER ${user}`,
    'ENTRYPOINT ["node", "/opt/stand-in/server.mjs"]',
  ].join("\n");
}

/** The Dockerfile lines after `FROM <tools>` of each third-party image. */
const RECIPES: Record<ImageKey, string> = {
  postgres: [
    "RUN mkdir -p /docker-entrypoint-initdb.d",
    "COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
    "RUN chmod 755 /usr/local/bin/docker-entrypoint.sh",
    `ENV PATH=${PG_BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    // The official image's: `docker stop` / `restart` ask for a fast shutdown (SIGTERM would wait for every client).
    "STOPSIGNAL SIGINT",
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
    'CMD ["postgres"]',
  ].join("\n"),
  redis: [
    "RUN mkdir -p /data && chown redis:redis /data",
    "COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
    "RUN chmod 755 /usr/local/bin/docker-entrypoint.sh",
    "WORKDIR /data",
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
    'CMD ["redis-server"]',
  ].join("\n"),
  mongo: [
    "COPY mongo mongodump mongorestore /usr/local/bin/",
    "RUN chmod 755 /usr/local/bin/mongo /usr/local/bin/mongodump /usr/local/bin/mongorestore",
    node({ role: "mongo" }, "node", ["/data/db"]),
  ].join("\n"),
  clickhouse: node({ role: "http", port: 8123, health: ["/ping"], tcp: [9000] }, "101:101", [
    "/var/lib/clickhouse",
    "/var/log/clickhouse-server",
  ]),
  minio: node(
    {
      role: "http",
      port: 9000,
      health: ["/minio/health/live"],
      needs: ["MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"],
      fake: "minio",
    },
    "65532",
    ["/data"],
  ),
  minioClient: node({ role: "mc" }, "65532"),
  langfuseWeb: node(
    {
      role: "http",
      port: 3000,
      health: ["/api/public/health"],
      needs: [...LANGFUSE_NEEDS, "NEXTAUTH_SECRET"],
      requires: LANGFUSE_REQUIRES,
      fake: "langfuse",
    },
    "1001",
  ),
  langfuseWorker: node(
    { role: "http", port: 3030, health: ["/api/health"], needs: LANGFUSE_NEEDS, requires: LANGFUSE_REQUIRES },
    "1001",
  ),
  presidioAnalyzer: node({ role: "http", port: 3000, health: ["/health"], fake: "presidio" }, "1001"),
  presidioAnonymizer: node({ role: "http", port: 3000, health: ["/health"], fake: "presidio" }, "1001"),
  prometheus: [
    "RUN mkdir -p /prometheus && chown nobody:nogroup /prometheus",
    "USER nobody",
    "WORKDIR /prometheus",
    'ENTRYPOINT ["/usr/bin/prometheus"]',
    'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]',
  ].join("\n"),
  alertmanager: [
    "RUN mkdir -p /alertmanager && chown nobody:nogroup /alertmanager",
    "USER nobody",
    "WORKDIR /alertmanager",
    'ENTRYPOINT ["/usr/bin/prometheus-alertmanager"]',
    'CMD ["--config.file=/etc/alertmanager/alertmanager.yml", "--storage.path=/alertmanager"]',
  ].join("\n"),
  grafana: node({ role: "http", port: 3000, health: ["/api/health"] }, "472", ["/var/lib/grafana"]),
  postgresExporter: ["USER nobody", 'ENTRYPOINT ["/usr/bin/prometheus-postgres-exporter"]'].join("\n"),
  redisExporter: ["USER nobody", 'ENTRYPOINT ["/usr/bin/prometheus-redis-exporter"]'].join("\n"),
  librechat: node(
    {
      role: "http",
      port: 3080,
      health: ["/health"],
      needs: ["CREDS_KEY", "CREDS_IV", "JWT_SECRET", "JWT_REFRESH_SECRET"],
      files: ["CONFIG_PATH"],
      fake: "chat",
    },
    "1000",
    ["/app/uploads", "/app/api/logs", "/app/client/public/images"],
  ),
  caddy: ['ENTRYPOINT ["/usr/bin/caddy"]', 'CMD ["run", "--config", "/etc/caddy/Caddyfile"]'].join("\n"),
};

/**
 * Builds (or finds in the build cache) the stand-in of every third-party image `refs` names, tagged with that
 * reference, and {@link MODEL_SERVER_IMAGE} and {@link MCP_SERVER_IMAGE}. `workDir` receives the build context (the bundled ./server.ts and the entrypoint scripts).
 * @returns the IMAGES key each reference stands in for.
 * @throws Error for a reference infra/images.ts does not pin, or with docker's output when a build fails.
 */
export async function buildStandIns(
  engine: DockerEngine,
  refs: readonly string[],
  workDir: string,
): Promise<Map<string, ImageKey>> {
  const keys = new Map<string, ImageKey>();
  for (const ref of refs) {
    const key = (Object.keys(IMAGES) as ImageKey[]).find((k) => IMAGES[k].ref === ref);
    if (!key) throw new Error(`${ref} is not an image infra/images.ts pins; it has no stand-in`);
    keys.set(ref, key);
  }
  mkdirSync(workDir, { recursive: true });
  await build({
    entryPoints: [path.join(import.meta.dirname, "server.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: path.join(workDir, "server.mjs"),
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: "warning",
  });
  for (const [name, content] of Object.entries(SCRIPTS)) writeFileSync(path.join(workDir, name), content);

  if (!engine.hasImage(NODE_BASE)) importStandIn(engine, NODE_BASE);
  const tools = [
    `FROM ${NODE_BASE}`,
    `RUN printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${PACKAGES.join(" ")} && rm -rf /var/lib/apt/lists/*`,
  ].join("\n");
  await buildFrom(engine, TOOLS, tools, workDir);
  for (const [ref, key] of keys) await buildFrom(engine, ref, `FROM ${TOOLS}\n${RECIPES[key]}\n`, workDir);
  const modelServer = node(
    { role: "http", port: MODEL_SERVER_PORT, health: ["/health"], fake: "openai" },
    "1000",
  );
  await buildFrom(engine, MODEL_SERVER_IMAGE, `FROM ${TOOLS}\n${modelServer}\n`, workDir);
  const mcpServer = node({ role: "http", port: MCP_SERVER_PORT, health: ["/health"], fake: "mcp" }, "1000");
  await buildFrom(engine, MCP_SERVER_IMAGE, `FROM ${TOOLS}\n${mcpServer}\n`, workDir);
  return keys;
}

async function buildFrom(
  engine: DockerEngine,
  tag: string,
  dockerfile: string,
  context: string,
): Promise<void> {
  const file = path.join(context, `Dockerfile.${tag.replace(/[^A-Za-z0-9.-]/g, "_")}`);
  writeFileSync(file, dockerfile);
  const r = await engine.dockerStreamed(
    ["build", "--quiet", "--network", "host", "-f", file, "-t", tag, context],
    20 * 60_000,
  );
  if (r.status !== 0) throw new Error(`building the stand-in ${tag} failed:\n${r.tail}`);
}
