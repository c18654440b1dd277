/**
 * The benchmark's full-pipeline gateway (target (d), left out with `--no-full`): the gateway with a database
 * (virtual keys, spend) and Redis (limits), called with a virtual key instead of the master key, as the targets
 * of docs/architecture.md assume. The database is a fresh one on the local Postgres, dropped at the end.
 */
import { join } from "node:path";
import pg from "pg";
import { type Service, spawnGateway } from "./children.js";
import { type BenchGatewaySettings, benchGatewayEnv } from "./gateway-env.js";

/** A throw-away database on the local Postgres. */
export interface BenchDatabase {
  /** DATABASE_URL for the gateway. */
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates a fresh database `<prefix>_<time>_<pid>` (prefix default `bench`) next to `adminUrl`'s (e.g. postgres://postgres@127.0.0.1:5432/postgres).
 * @throws the driver's error when Postgres is unreachable.
 */
export async function createBenchDatabase(adminUrl: string, prefix = "bench"): Promise<BenchDatabase> {
  const name = `${prefix}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Makes a virtual key through the gateway's admin API (`POST /key/generate`, LiteLLM's shape) with limits and a
 * budget high enough never to refuse the benchmark, so that every check still runs on every request.
 * @returns the plaintext key (`sk-…`).
 * @throws when the gateway has no admin API (404) or refuses.
 */
export async function generateVirtualKey(gatewayOrigin: string, masterKey: string): Promise<string> {
  const res = await fetch(`${gatewayOrigin}/key/generate`, {
    method: "POST",
    headers: { authorization: `Bearer ${masterKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      key_alias: `bench-${Date.now()}`,
      models: ["bench"],
      max_budget: 1_000_000,
      budget_duration: "30d",
      rpm_limit: 100_000_000,
      tpm_limit: 1_000_000_000_000,
      duration: "1d",
    }),
  });
  const text = await res.text();
  if (!res.ok) {
    throw new Error(
      `POST /key/generate answered ${res.status}${res.status === 404 ? " (the gateway has no admin API with DATABASE_URL yet)" : ""}: ${text.slice(0, 300)}`,
    );
  }
  const key = (JSON.parse(text) as { key?: unknown }).key;
  if (typeof key !== "string" || !key.startsWith("sk-"))
    throw new Error(`POST /key/generate returned no key: ${text.slice(0, 300)}`);
  return key;
}

/**
 * The settings of a gateway built from checkout `dir` for a side-by-side run: that checkout's
 * `bench/gateway.yaml`, an ephemeral port, and its Redis keys under `<label>:` so that gateways sharing one Redis
 * keep apart.
 */
export function checkoutGatewaySettings(
  label: string,
  dir: string,
  access: { masterKey: string; upstreamUrl: string; upstreamKey: string },
): BenchGatewaySettings {
  return { port: 0, ...access, config: join(dir, "bench", "gateway.yaml"), redisKeyPrefix: `${label}:` };
}

/** A full-pipeline gateway started by {@link startFullPipelineGateway}: its process, origin, database and key. */
export interface FullPipelineGateway {
  service: Service;
  origin: string;
  database: BenchDatabase;
  /** A virtual key made with the master key (`POST /key/generate`). */
  key: string;
}

/**
 * Starts a built gateway (`<checkout>/services/gateway/dist/server.js`) with the full pipeline: a fresh
 * database on `adminUrl`'s Postgres, Redis at `redisUrl` under `settings.redisKeyPrefix`, then makes a virtual
 * key. The caller stops the service and drops the database.
 * @throws Error when the gateway does not start or the key cannot be made.
 */
export async function startFullPipelineGateway(
  label: string,
  settings: BenchGatewaySettings,
  infra: { adminUrl: string; databasePrefix: string; redisUrl: string },
  launch: { checkout: string; nodeFlags?: string[] },
): Promise<FullPipelineGateway> {
  const database = await createBenchDatabase(infra.adminUrl, infra.databasePrefix);
  try {
    const env = benchGatewayEnv(settings, database.url, infra.redisUrl);
    const { service, origin } = await spawnGateway(label, env, {
      entry: join(launch.checkout, "services/gateway/dist/server.js"),
      cwd: launch.checkout,
      nodeFlags: launch.nodeFlags ?? [],
    });
    try {
      return { service, origin, database, key: await generateVirtualKey(origin, settings.masterKey) };
    } catch (error) {
      await service.stop(2000);
      throw error;
    }
  } catch (error) {
    await database.drop().catch(() => undefined);
    throw error;
  }
}
