/**
 * The local stack under Pulumi mocks: the containers of docs/architecture.md ("The stack"), their ports, health checks, volumes,
 * images and the wiring of shared secrets. `.env` here is the shipped `.env.example` (all placeholders).
 */
import { readFileSync } from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { parse as parseDotenv } from "dotenv";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ContainerView,
  container,
  installMocks,
  isSecretValue,
  type MockedRun,
  runPlatform,
  stackSettings,
} from "./harness.js";

const SPEC_CONTAINERS = [
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
];
const DATABASES = ["relational-db", "document-db", "cache", "analytics-db", "object-store"];
const SPEC_PORTS: Record<string, number> = {
  chat: 3080,
  console: 3001,
  gateway: 4000,
  "trace-web": 3000,
  metrics: 9090,
  dashboards: 3030,
  alertmanager: 9093,
};

let run: MockedRun;
let all: ContainerView[];

beforeAll(async () => {
  await installMocks("local");
  const { parseConfig, REPO_ROOT } = {
    ...(await import("../../infra/config.js")),
    ...(await import("../../infra/files.js")),
  };
  const env = parseDotenv(readFileSync(`${REPO_ROOT}.env.example`, "utf8"));
  run = await runPlatform(parseConfig(await stackSettings("local"), env));
  all = [...run.containers.values()];
});

describe("local stack: containers", () => {
  it("declares exactly the stack's containers", () => {
    expect([...run.containers.keys()].sort()).toEqual([...SPEC_CONTAINERS].sort());
    const registeredContainers = run.registered.filter((r) => r.type === "docker:index/container:Container");
    expect(registeredContainers).toHaveLength(SPEC_CONTAINERS.length);
  });

  it("names each container after its service and gives it that alias on the platform network", () => {
    for (const c of all) {
      expect(c.networksAdvanced[0]).toEqual({ name: "platform", aliases: [c.name] });
    }
    const network = run.registered.find((r) => r.type === "docker:index/network:Network");
    expect(network?.inputs.name).toBe("platform");
  });

  it("publishes exactly the seven host ports, each on its own service", () => {
    const published = all.flatMap((c) => c.ports.map((p) => [c.name, p.external] as const));
    expect(Object.fromEntries(published)).toEqual(SPEC_PORTS);
    expect(published).toHaveLength(7);
    for (const c of all) for (const p of c.ports) expect(p.ip).toBe("127.0.0.1");
    expect(container(run, "dashboards").ports).toEqual([
      expect.objectContaining({ internal: 3000, external: 3030 }),
    ]);
  });

  it("publishes no database port", () => {
    for (const name of DATABASES) expect(container(run, name).ports).toEqual([]);
  });

  it("gives every long-running container a health check and a restart policy; object-store-init runs once", () => {
    for (const c of all.filter((c) => c.name !== "object-store-init")) {
      expect(c.healthcheck?.tests?.[0], c.name).toMatch(/^CMD(-SHELL)?$/);
      expect(c.restart, c.name).toBe("unless-stopped");
    }
    const init = container(run, "object-store-init");
    expect(init.healthcheck).toBeUndefined();
    expect(init.restart).toBe("no");
    expect(init.mustRun).toBe(false);
    expect(init.command).toEqual(["mb", "--ignore-existing", "store/langfuse"]);
  });

  it("probes with programs the images have: node for node images, wget for busybox ones, curl for Presidio", () => {
    const program = (name: string) => container(run, name).healthcheck?.tests?.[1];
    for (const name of ["gateway", "console", "scanner", "chat"]) expect(program(name)).toBe("node");
    for (const name of ["trace-web", "trace-worker", "analytics-db", "metrics", "alertmanager"])
      expect(program(name)).toBe("wget");
    expect(program("pii-analyzer")).toBe("curl");
    expect(program("relational-db")).toBe("pg_isready");
    expect(container(run, "relational-db").healthcheck?.tests).toContain("127.0.0.1");
    expect(container(run, "cache").healthcheck?.tests).toEqual([
      "CMD-SHELL",
      "redis-cli ping | grep -q PONG",
    ]);
    expect(container(run, "gateway").healthcheck?.tests?.[3]).toContain(
      "http://127.0.0.1:4000/health/liveliness",
    );
    expect(container(run, "scanner").healthcheck?.startPeriod).toBe("300s");
    expect(container(run, "trace-web").healthcheck?.startPeriod).toBe("180s");
  });

  it("keeps data on named volumes, the scanner's model cache included", () => {
    const volumeOf = (name: string, path: string) =>
      container(run, name).volumes.find((v) => v.containerPath === path)?.volumeName;
    expect(volumeOf("relational-db", "/var/lib/postgresql/data")).toBe("platform-relational-db-data");
    expect(volumeOf("document-db", "/data/db")).toBe("platform-document-db-data");
    expect(volumeOf("cache", "/data")).toBe("platform-cache-data");
    expect(volumeOf("analytics-db", "/var/lib/clickhouse")).toBe("platform-analytics-db-data");
    expect(volumeOf("object-store", "/data")).toBe("platform-object-store-data");
    expect(volumeOf("scanner", "/models")).toBe("platform-scanner-models");
    expect(volumeOf("metrics", "/prometheus")).toBe("platform-metrics-data");
    expect(volumeOf("dashboards", "/var/lib/grafana")).toBe("platform-dashboards-data");
    const volumes = run.registered
      .filter((r) => r.type === "docker:index/volume:Volume")
      .map((r) => r.inputs.name);
    expect(new Set(volumes).size).toBe(volumes.length);
  });

  it("caps the memory of analytics-db and trace-worker", () => {
    expect(container(run, "analytics-db").memory).toBe(3072);
    expect(container(run, "trace-worker").memory).toBe(1536);
  });
});

describe("local stack: images", () => {
  it("pulls third-party images by pinned tag and runs them by image ID", async () => {
    const { IMAGES } = await import("../../infra/images.js");
    const pulls = run.registered.filter((r) => r.type === "docker:index/remoteImage:RemoteImage");
    const refs = Object.values(IMAGES).map((i) => i.ref as string);
    for (const pull of pulls) {
      expect(refs).toContain(pull.inputs.name);
      expect(pull.inputs.name).toMatch(/:[^:/]+$/);
      expect(pull.inputs.keepLocally).toBe(true);
    }
    expect(container(run, "relational-db").image).toBe("sha256:pulled-relational-db-image");
  });

  it("builds gateway, console and scanner locally as platform/<name>:local, never pushed, context = repo root", () => {
    const builds = run.registered.filter((r) => r.type === "docker:index/image:Image");
    expect(builds.map((b) => b.inputs.imageName).sort()).toEqual([
      "platform/console:local",
      "platform/gateway:local",
      "platform/scanner:local",
    ]);
    for (const b of builds) {
      expect(b.inputs.skipPush).toBe(true);
      const build = b.inputs.build as { context: string; dockerfile: string };
      expect(build.context).toBe(".");
    }
    const dockerfiles = builds.map((b) => (b.inputs.build as { dockerfile: string }).dockerfile).sort();
    expect(dockerfiles).toEqual([
      "scanner/Dockerfile",
      "services/console/Dockerfile",
      "services/gateway/Dockerfile",
    ]);
  });

  it("feeds the built image's ID, not its tag, to the container (a rebuild replaces it)", () => {
    expect(container(run, "gateway").image).toBe("sha256:built-gateway-build");
    expect(container(run, "console").image).toBe("sha256:built-console-build");
    expect(container(run, "scanner").image).toBe("sha256:built-scanner-build");
  });

  it("runs every container through the stack's docker provider (local daemon: no host set)", () => {
    const provider = run.registered.find((r) => r.type === "pulumi:providers:docker");
    expect(provider?.inputs.host).toBeUndefined();
    for (const c of all) expect(c.provider, c.name).toMatch(/pulumi:providers:docker::docker::/);
  });
});

describe("local stack: resource graph", () => {
  it("parents every container to its component", () => {
    const componentOf = (c: ContainerView) => c.urn.split("::")[2]?.split("$")[0];
    const expected: Record<string, string[]> = {
      "platform:datastores:Datastores": ["relational-db", "document-db", "cache"],
      "platform:tracing:Tracing": [
        "analytics-db",
        "object-store",
        "object-store-init",
        "trace-web",
        "trace-worker",
      ],
      "platform:guardrails:Guardrails": ["pii-analyzer", "pii-anonymizer", "scanner"],
      "platform:gateway:Gateway": ["gateway"],
      "platform:chat:Chat": ["chat"],
      "platform:console:Console": ["console"],
      "platform:monitoring:Monitoring": [
        "metrics",
        "alertmanager",
        "dashboards",
        "relational-db-exporter",
        "cache-exporter",
      ],
    };
    const actual: Record<string, string[]> = {};
    for (const c of all) {
      const component = componentOf(c) ?? "?";
      actual[component] = [...(actual[component] ?? []), c.name];
    }
    for (const names of Object.values(actual)) names.sort();
    for (const names of Object.values(expected)) names.sort();
    expect(actual).toEqual(expected);
  });

  it("registers one component per concern and no reverse proxy locally", () => {
    const components = run.registered
      .filter((r) => !r.custom && r.type.startsWith("platform:"))
      .map((r) => r.type);
    expect(components.sort()).toEqual(
      [
        "platform:chat:Chat",
        "platform:console:Console",
        "platform:datastores:Datastores",
        "platform:gateway:Gateway",
        "platform:guardrails:Guardrails",
        "platform:monitoring:Monitoring",
        "platform:network:Network",
        "platform:secrets:Secrets",
        "platform:tracing:Tracing",
      ].sort(),
    );
  });
});

describe("local stack: wiring", () => {
  it("generates every placeholder secret with @pulumi/random", () => {
    const passwords = run.registered.filter((r) => r.type === "random:index/randomPassword:RandomPassword");
    expect(passwords.map((p) => p.name)).toContain("gateway-master-key");
    expect(passwords.map((p) => p.name)).toContain("jwt-refresh-secret");
    for (const p of passwords) expect(p.inputs.special).toBe(false);
  });

  it("keeps console sessions in the stack's Redis, and gives the gateway the METRICS_TOKEN", () => {
    const redis = container(run, "gateway").env.REDIS_URL;
    expect(redis).toMatch(/^redis:\/\/:.+@cache:6379$/);
    expect(container(run, "console").env.REDIS_URL).toBe(redis);
    expect(container(run, "gateway").env.METRICS_TOKEN).toBe("rnd-metrics-token");
  });

  it("gives gateway and console the same master key, and the chat its own service key, never the master key", () => {
    const key = "sk-rnd-gateway-master-key";
    expect(container(run, "gateway").env.GATEWAY_MASTER_KEY).toBe(key);
    expect(container(run, "console").env.GATEWAY_MASTER_KEY).toBe(key);
    const chat = container(run, "chat").env;
    expect(chat.GATEWAY_API_KEY).toBe("sk-rnd-chat-service-key");
    expect(container(run, "gateway").env.CHAT_SERVICE_KEY).toBe(chat.GATEWAY_API_KEY);
    expect(Object.values(chat)).not.toContain(key);
    const generated = run.registered.find((r) => r.name === "chat-service-key");
    expect(generated?.type).toBe("random:index/randomPassword:RandomPassword");
    expect(generated?.inputs.special).toBe(false);
  });

  it("tells the gateway the console's public URL (GET /ui redirects there)", () => {
    expect(container(run, "gateway").env.CONSOLE_PUBLIC_URL).toBe("http://localhost:3001");
  });

  it("gives chat and console the same JWT_REFRESH_SECRET and the same document-db", () => {
    const chat = container(run, "chat").env;
    const console = container(run, "console").env;
    expect(chat.JWT_REFRESH_SECRET).toBe("rnd-jwt-refresh-secret");
    expect(console.JWT_REFRESH_SECRET).toBe(chat.JWT_REFRESH_SECRET);
    expect(console.MONGO_URI).toBe(chat.MONGO_URI);
    expect(chat.MONGO_URI).toBe(
      "mongodb://platform:rnd-document-db-password@document-db:27017/LibreChat?authSource=admin",
    );
    expect(container(run, "document-db").env.MONGO_INITDB_ROOT_PASSWORD).toBe("rnd-document-db-password");
  });

  it("hands the trace viewer's project keys to the gateway's TRACE_* settings", () => {
    const web = container(run, "trace-web").env;
    const gw = container(run, "gateway").env;
    expect(gw.TRACE_PUBLIC_KEY).toBe(web.LANGFUSE_INIT_PROJECT_PUBLIC_KEY);
    expect(gw.TRACE_SECRET_KEY).toBe(web.LANGFUSE_INIT_PROJECT_SECRET_KEY);
    expect(gw.TRACE_PUBLIC_KEY).toMatch(/^pk-lf-/);
    expect(gw.TRACE_SECRET_KEY).toMatch(/^sk-lf-/);
    expect(gw.TRACE_HOST).toBe("http://trace-web:3000");
  });

  it("builds database URLs from the generated passwords", () => {
    const pg = container(run, "relational-db").env;
    expect(pg.POSTGRES_PASSWORD).toBe("rnd-relational-db-password");
    expect(container(run, "gateway").env.DATABASE_URL).toBe(
      "postgresql://platform:rnd-relational-db-password@relational-db:5432/gateway",
    );
    expect(container(run, "trace-web").env.DATABASE_URL).toBe(
      "postgresql://platform:rnd-relational-db-password@relational-db:5432/langfuse",
    );
    expect(container(run, "relational-db").uploads).toEqual([
      { file: "/docker-entrypoint-initdb.d/10-trace-db.sql", content: "CREATE DATABASE langfuse;\n" },
    ]);
    expect(container(run, "gateway").env.REDIS_URL).toBe("redis://:rnd-cache-password@cache:6379");
    expect(container(run, "cache").command).toContain("rnd-cache-password");
    expect(container(run, "cache-exporter").env.REDIS_PASSWORD).toBe("rnd-cache-password");
    expect(container(run, "relational-db-exporter").env.DATA_SOURCE_PASS).toBe("rnd-relational-db-password");
    const worker = container(run, "trace-worker").env;
    expect(worker.CLICKHOUSE_PASSWORD).toBe(container(run, "analytics-db").env.CLICKHOUSE_PASSWORD);
    expect(worker.LANGFUSE_S3_EVENT_UPLOAD_SECRET_ACCESS_KEY).toBe(
      container(run, "object-store").env.MINIO_ROOT_PASSWORD,
    );
    expect(container(run, "object-store-init").env.MC_HOST_store).toBe(
      "http://platform:rnd-object-store-password@object-store:9000",
    );
  });

  it("gives the gateway its settings and the guardrail policy file", () => {
    const gw = container(run, "gateway");
    expect(gw.env).toMatchObject({
      PORT: "4000",
      GATEWAY_WORKERS: "1",
      GATEWAY_CONFIG: "/app/litellm/config.yaml",
      GUARDRAIL_POLICY: "/app/litellm/guardrails/policy.yaml",
      GUARD_SCANNER_API_BASE: "http://scanner:8000",
      PII_ANALYZER_API_BASE: "http://pii-analyzer:3000",
      PII_ANONYMIZER_API_BASE: "http://pii-anonymizer:3000",
      DEFAULT_USER_BUDGET: "10",
      DEFAULT_BUDGET_DURATION: "30d",
      DEFAULT_TPM_LIMIT: "10000",
      DEFAULT_RPM_LIMIT: "60",
    });
    expect(gw.env).not.toHaveProperty("BUDGET_WEBHOOK_URL"); // empty in .env.example: events only recorded
    expect(gw.uploads.map((u) => u.file)).toEqual(["/app/litellm/guardrails/policy.yaml"]);
    expect(container(run, "scanner").env.PORT).toBe("8000");
  });

  it("ships chat-app.yaml to the chat and sets the local cookie domain on the console", () => {
    const chat = container(run, "chat");
    expect(chat.uploads.map((u) => u.file)).toEqual(["/app/librechat.yaml"]);
    expect(chat.env.CONFIG_PATH).toBe("/app/librechat.yaml");
    expect(chat.uploads[0]?.content).toContain("http://gateway:4000/v1");
    expect(container(run, "console").env).toMatchObject({
      COOKIE_DOMAIN: "localhost",
      COOKIE_SAMESITE: "lax",
    });
    expect(container(run, "console").env).not.toHaveProperty("DEFAULT_TEAM_ID"); // empty in .env.example
  });

  it("exports every public URL and the logins", async () => {
    expect(run.platform.outputs.urls).toEqual({
      chat: "http://localhost:3080",
      console: "http://localhost:3001",
      gateway: "http://localhost:4000",
      gatewayApi: "http://localhost:4000/v1",
      trace: "http://localhost:3000",
      dashboards: "http://localhost:3030",
      metrics: "http://localhost:9090",
      alertmanager: "http://localhost:9093",
    });
    expect(await run.value(run.platform.outputs.traceLogin)).toEqual({
      email: "admin@platform.local",
      password: "rnd-trace-init-user-password",
    });
    expect(await run.value(run.platform.outputs.dashboardsLogin)).toEqual({
      user: "admin",
      password: "rnd-dashboard-admin-password",
    });
    expect(container(run, "dashboards").env.GF_SECURITY_ADMIN_PASSWORD).toBe("rnd-dashboard-admin-password");
    expect(container(run, "trace-web").env.LANGFUSE_INIT_USER_PASSWORD).toBe("rnd-trace-init-user-password");
  });

  it("marks the logins and the master key as secret outputs", async () => {
    const { traceLogin, dashboardsLogin, gatewayMasterKey } = run.platform.outputs;
    expect(await pulumi.isSecret(traceLogin)).toBe(true);
    expect(await pulumi.isSecret(dashboardsLogin)).toBe(true);
    expect(await pulumi.isSecret(gatewayMasterKey)).toBe(true);
  });

  it("sends secret-bearing container settings to the engine as secrets", () => {
    for (const name of ["gateway", "console", "chat", "relational-db", "trace-web"]) {
      const reg = run.registered.find(
        (r) => r.type === "docker:index/container:Container" && r.inputs.name === name,
      );
      const envs = reg?.rawInputs.envs;
      const wrapped = isSecretValue(envs) || (Array.isArray(envs) && envs.some(isSecretValue));
      expect(wrapped, name).toBe(true);
    }
  });
});
