/**
 * The third-party containers of the local stack against their upstreams' own deployment contracts
 * (docs/deploy-contracts.md lists each one with its source): env names and formats, ports, mount paths,
 * command-line flags, users, and that every health check runs a program its image ships.
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { REPO_ROOT } from "../../infra/files.js";
import { container, installMocks, type MockedRun, runPlatform, stackSettings } from "./harness.js";

let run: MockedRun;
/** Env of container `name`. */
const env = (name: string) => container(run, name).env;
/** Raw registered inputs of container `name` (fields the harness's view does not carry: user, ulimits). */
const inputs = (name: string) => {
  const reg = run.registered.find(
    (r) => r.type === "docker:index/container:Container" && r.inputs.name === name,
  );
  if (!reg) throw new Error(`container ${name} was not registered`);
  return reg.inputs as Record<string, unknown>;
};
const volumePaths = (name: string) => container(run, name).volumes.map((v) => v.containerPath);
const uploadFiles = (name: string) => container(run, name).uploads.map((u) => u.file);

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig } = await import("../../infra/config.js");
  const example = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), example));
});

describe("Langfuse v4 (langfuse/langfuse docker-compose.yml, packages/shared/src/env.ts, web/src/env.mjs)", () => {
  it("gives the worker every setting the web container shares with it (compose's one env anchor)", () => {
    const web = env("trace-web");
    const worker = env("trace-worker");
    const webOnly = ["NEXTAUTH_SECRET", "AUTH_DISABLE_SIGNUP"];
    for (const [key, value] of Object.entries(web)) {
      if (webOnly.includes(key) || key.startsWith("LANGFUSE_INIT_")) continue;
      expect(worker[key], key).toBe(value);
    }
    expect(worker.NEXTAUTH_URL).toBe("http://localhost:3000");
  });

  it("sets the secrets Langfuse validates: ENCRYPTION_KEY 64 hex, SALT and NEXTAUTH_SECRET non-empty", () => {
    const web = env("trace-web");
    expect(web.ENCRYPTION_KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(web.SALT?.length).toBeGreaterThan(0);
    expect(web.NEXTAUTH_SECRET?.length).toBeGreaterThan(0);
    expect(web.HOSTNAME).toBe("0.0.0.0");
  });

  it("points ClickHouse settings at analytics-db's HTTP and native ports with its own credentials", () => {
    const worker = env("trace-worker");
    const clickhouse = env("analytics-db");
    expect(worker.CLICKHOUSE_URL).toBe("http://analytics-db:8123");
    expect(worker.CLICKHOUSE_MIGRATION_URL).toBe("clickhouse://analytics-db:9000");
    expect(worker.CLICKHOUSE_CLUSTER_ENABLED).toBe("false");
    expect(worker.CLICKHOUSE_USER).toBe(clickhouse.CLICKHOUSE_USER);
    expect(worker.CLICKHOUSE_PASSWORD).toBe(clickhouse.CLICKHOUSE_PASSWORD);
    expect(clickhouse.CLICKHOUSE_DB).toBe("default");
  });

  it("runs ClickHouse >= 25.12 as uid 101 with nofile 262144, data and logs on volumes", async () => {
    const { IMAGES } = await import("../../infra/images.js");
    const [major, minor] = (IMAGES.clickhouse.ref.split(":")[1] ?? "").split(".").map(Number);
    expect((major ?? 0) * 100 + (minor ?? 0)).toBeGreaterThanOrEqual(2512);
    expect(inputs("analytics-db").user).toBe("101:101");
    expect(inputs("analytics-db").ulimits).toEqual([{ name: "nofile", soft: 262144, hard: 262144 }]);
    expect(volumePaths("analytics-db").sort()).toEqual(["/var/lib/clickhouse", "/var/log/clickhouse-server"]);
  });

  it("uploads events to the bucket object-store-init creates, path-style, with MinIO's root credentials", () => {
    const worker = env("trace-worker");
    const minio = env("object-store");
    const bucket = container(run, "object-store-init")
      .command?.at(-1)
      ?.replace(/^store\//, "");
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_BUCKET).toBe(bucket);
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_ENDPOINT).toBe("http://object-store:9000");
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_FORCE_PATH_STYLE).toBe("true");
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_ACCESS_KEY_ID).toBe(minio.MINIO_ROOT_USER);
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_SECRET_ACCESS_KEY).toBe(minio.MINIO_ROOT_PASSWORD);
    expect(container(run, "object-store").command).toEqual(
      expect.arrayContaining(["server", "/data", "--address", ":9000"]),
    );
  });

  it("queues on cache with its password, and cache never evicts (maxmemory-policy noeviction)", () => {
    const cacheCommand = container(run, "cache").command ?? [];
    const password = cacheCommand[cacheCommand.indexOf("--requirepass") + 1];
    expect(env("trace-worker").REDIS_CONNECTION_STRING).toBe(`redis://:${password}@cache:6379`);
    expect(cacheCommand[cacheCommand.indexOf("--maxmemory-policy") + 1]).toBe("noeviction");
  });

  it("initialises org, project, key pair and user together (web/src/initialize.ts refuses halves)", () => {
    const web = env("trace-web");
    for (const key of ["ORG_ID", "PROJECT_ID", "PROJECT_PUBLIC_KEY", "PROJECT_SECRET_KEY", "USER_EMAIL"])
      expect(web[`LANGFUSE_INIT_${key}`], key).toBeTruthy();
    expect(web.LANGFUSE_INIT_USER_PASSWORD?.length).toBeGreaterThanOrEqual(8);
    expect(env("trace-worker").LANGFUSE_INIT_ORG_ID).toBeUndefined();
  });
});

describe("LibreChat (danny-avila/LibreChat .env.example, deploy-compose.yml, Dockerfile)", () => {
  it("gets CREDS_KEY as 64 and CREDS_IV as 32 hex characters, and two different JWT secrets", () => {
    const chat = env("chat");
    expect(chat.CREDS_KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(chat.CREDS_IV).toMatch(/^[0-9a-f]{32}$/);
    expect(chat.JWT_SECRET?.length).toBeGreaterThan(0);
    expect(chat.JWT_REFRESH_SECRET?.length).toBeGreaterThan(0);
    expect(chat.JWT_SECRET).not.toBe(chat.JWT_REFRESH_SECRET);
  });

  it("reads its config from the path the config is uploaded to (CONFIG_PATH)", () => {
    expect(uploadFiles("chat")).toContain(env("chat").CONFIG_PATH);
  });

  it("connects to document-db as its root user against the admin database", () => {
    const mongo = env("document-db");
    const uri = new URL(env("chat").MONGO_URI ?? "");
    expect(uri.protocol).toBe("mongodb:");
    expect(uri.host).toBe("document-db:27017");
    expect(uri.pathname).toBe("/LibreChat");
    expect(uri.searchParams.get("authSource")).toBe("admin");
    expect(decodeURIComponent(uri.username)).toBe(mongo.MONGO_INITDB_ROOT_USERNAME);
    expect(decodeURIComponent(uri.password)).toBe(mongo.MONGO_INITDB_ROOT_PASSWORD);
  });

  it("listens on all interfaces at the published port, its public URL in DOMAIN_CLIENT and DOMAIN_SERVER", () => {
    const chat = env("chat");
    expect(chat.HOST).toBe("0.0.0.0");
    expect(container(run, "chat").ports.map((p) => String(p.internal))).toEqual([chat.PORT]);
    expect(chat.DOMAIN_CLIENT).toBe("http://localhost:3080");
    expect(chat.DOMAIN_SERVER).toBe(chat.DOMAIN_CLIENT);
    expect(chat.ALLOW_REGISTRATION).toBe("true");
  });

  it("keeps uploads, logs and images (avatars) on volumes, at the image's paths", () => {
    expect(volumePaths("chat").sort()).toEqual([
      "/app/api/logs",
      "/app/client/public/images",
      "/app/uploads",
    ]);
  });
});

describe("Presidio (microsoft/presidio presidio-analyzer/Dockerfile, presidio-anonymizer/Dockerfile)", () => {
  it("probes both services on the image's port 3000 at /health with the image's curl", () => {
    for (const name of ["pii-analyzer", "pii-anonymizer"]) {
      expect(container(run, name).healthcheck?.tests.slice(0, 2), name).toEqual(["CMD", "curl"]);
      expect(container(run, name).healthcheck?.tests.at(-1), name).toBe("http://127.0.0.1:3000/health");
      expect(env(name).PORT, name).toBeUndefined();
    }
    expect(env("gateway").PII_ANALYZER_API_BASE).toBe("http://pii-analyzer:3000");
    expect(env("gateway").PII_ANONYMIZER_API_BASE).toBe("http://pii-anonymizer:3000");
  });
});

describe("exporters (prometheus-community/postgres_exporter, oliver006/redis_exporter READMEs)", () => {
  const targets = () => {
    const prom = parseYaml(readFileSync(`${REPO_ROOT}monitoring/prometheus.yml`, "utf8")) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    return Object.fromEntries(
      prom.scrape_configs.map((s) => [s.job_name, s.static_configs.flatMap((c) => c.targets)]),
    );
  };

  it("gives postgres_exporter DATA_SOURCE_URI/USER/PASS of relational-db, scraped on 9187", () => {
    const exporter = env("relational-db-exporter");
    const pg = env("relational-db");
    expect(exporter.DATA_SOURCE_URI).toBe(`relational-db:5432/${pg.POSTGRES_DB}?sslmode=disable`);
    expect(exporter.DATA_SOURCE_USER).toBe(pg.POSTGRES_USER);
    expect(exporter.DATA_SOURCE_PASS).toBe(pg.POSTGRES_PASSWORD);
    expect(container(run, "relational-db-exporter").healthcheck?.tests.at(-1)).toContain(":9187/");
    expect(targets()["relational-db-exporter"]).toEqual(["relational-db-exporter:9187"]);
  });

  it("gives redis_exporter REDIS_ADDR and REDIS_PASSWORD of cache, scraped on 9121", () => {
    const exporter = env("cache-exporter");
    expect(exporter.REDIS_ADDR).toBe("redis://cache:6379");
    expect(exporter.REDIS_PASSWORD).toBe(env("cache").REDISCLI_AUTH);
    expect(container(run, "cache-exporter").healthcheck?.tests.at(-1)).toBe("http://127.0.0.1:9121/health");
    expect(targets()["cache-exporter"]).toEqual(["cache-exporter:9121"]);
  });
});

describe("Prometheus, Alertmanager, Grafana (their Dockerfiles and provisioning docs)", () => {
  const flag = (name: string, key: string) =>
    container(run, name)
      .command?.find((c) => c.startsWith(`${key}=`))
      ?.slice(key.length + 1);

  it("repeats Prometheus's default config and storage flags next to --web.enable-lifecycle", () => {
    expect(uploadFiles("metrics")).toContain(flag("metrics", "--config.file"));
    expect(volumePaths("metrics")).toContain(flag("metrics", "--storage.tsdb.path"));
    expect(container(run, "metrics").command).toContain("--web.enable-lifecycle");
  });

  it("repeats Alertmanager's default config and storage flags", () => {
    expect(uploadFiles("alertmanager")).toContain(flag("alertmanager", "--config.file"));
    expect(volumePaths("alertmanager")).toContain(flag("alertmanager", "--storage.path"));
  });

  it("provisions Grafana under /etc/grafana/provisioning, dashboards where the provider looks", () => {
    const files = uploadFiles("dashboards");
    expect(files).toContain("/etc/grafana/provisioning/datasources/prometheus.yml");
    const provider = container(run, "dashboards").uploads.find(
      (u) => u.file === "/etc/grafana/provisioning/dashboards/platform.yml",
    );
    const path = (parseYaml(provider?.content ?? "") as { providers: { options: { path: string } }[] })
      .providers[0]?.options.path;
    const dashboards = files.filter((f) => f.endsWith(".json"));
    expect(dashboards.length).toBeGreaterThan(0);
    for (const file of dashboards) expect(file.startsWith(`${path}/`), file).toBe(true);
    expect(volumePaths("dashboards")).toEqual(["/var/lib/grafana"]);
  });
});

describe("health checks run programs their images ship (infra/images.ts, from each upstream Dockerfile)", () => {
  it("pins the image variants that carry a probe program (plain redis_exporter and chainguard minio have none)", async () => {
    const { IMAGES } = await import("../../infra/images.js");
    expect(IMAGES.redisExporter.ref).toMatch(/-alpine$/);
    expect(IMAGES.minio.ref).toMatch(/-dev$/);
    expect(IMAGES.langfuseWeb.tools).not.toContain("curl");
    expect(IMAGES.langfuseWorker.tools).not.toContain("curl");
    expect(IMAGES.langfuseWeb.ref.split(":")[1]).toBe(IMAGES.langfuseWorker.ref.split(":")[1]);
  });

  it("for every pulled image, the probe's programs are in that image's tool list", async () => {
    const { IMAGES } = await import("../../infra/images.js");
    const { probeTools } = await import("../../infra/container.js");
    const pulls = run.registered.filter((r) => r.type === "docker:index/remoteImage:RemoteImage");
    let checked = 0;
    for (const c of run.containers.values()) {
      const pull = pulls.find((p) => `sha256:pulled-${p.name}` === c.image);
      if (!pull || !c.healthcheck) continue;
      const image = Object.values(IMAGES).find((i) => i.ref === pull.inputs.name);
      expect(image, c.name).toBeDefined();
      for (const tool of probeTools({ test: c.healthcheck.tests }))
        expect(image?.tools as readonly string[], `${c.name}: ${tool}`).toContain(tool);
      checked++;
    }
    expect(checked).toBe(15);
  });
});

describe("operator values the upstreams refuse are refused at `pulumi preview`", () => {
  const parse = async (values: Record<string, string>) => {
    const { parseConfig } = await import("../../infra/config.js");
    return () => parseConfig({}, values);
  };

  it("ANALYTICS_DB_PASSWORD without the characters Langfuse's ClickHouse migration URL cannot carry", async () => {
    for (const bad of ["a&b", "a=b", "a#b", "a?b", "a%b", "a+b", "a@b", "a b"])
      expect(await parse({ ANALYTICS_DB_PASSWORD: bad }), bad).toThrow(
        /ANALYTICS_DB_PASSWORD: must not contain/,
      );
    expect(await parse({ ANALYTICS_DB_PASSWORD: "Abc-123_x.y~z!" })).not.toThrow();
  });

  it("OBJECT_STORE_PASSWORD of at least 8 characters (MinIO refuses a shorter root password)", async () => {
    expect(await parse({ OBJECT_STORE_PASSWORD: "short12" })).toThrow(
      /OBJECT_STORE_PASSWORD: must be at least 8 characters/,
    );
    expect(await parse({ OBJECT_STORE_PASSWORD: "longer12" })).not.toThrow();
  });

  it("TRACE_INIT_USER_PASSWORD of at least 8 characters (Langfuse's user creation refuses shorter)", async () => {
    expect(await parse({ TRACE_INIT_USER_PASSWORD: "short12" })).toThrow(
      /TRACE_INIT_USER_PASSWORD: must be at least 8 characters/,
    );
    expect(await parse({ TRACE_INIT_USER_PASSWORD: "longer12" })).not.toThrow();
  });
});
