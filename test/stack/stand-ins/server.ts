/**
 * The program inside the stack rehearsal's stand-in images for third-party services Debian does not package
 * (bundled with esbuild into /opt/stand-in/server.mjs). The image bakes its role as the STAND_IN environment
 * variable (a {@link StandInRole} in JSON); the container's own environment is the one the Pulumi program declares.
 *
 * Roles:
 * - `http`: listens on `port`, answers `health` paths 200 only when every `needs` variable is set, every `files`
 *   variable names an existing file and every `requires` variable's URL accepts a TCP connection (else 503 naming
 *   what is missing); other paths go to the contract fake `fake` (test/fixtures), when there is one.
 * - `mongo`: the MongoDB 4.4 wire fake on 27017 with MONGO_INITDB_ROOT_USERNAME / _PASSWORD, data in /data/db.
 * - `mongo-shell`: the legacy `mongo` shell's health-check use: `--eval` of a ping, exit 0 when it answers ok.
 * - `mc`: MinIO's client for `mb [--ignore-existing] <alias>/<bucket>` with the alias from MC_HOST_<alias>.
 */

import { existsSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { MongoClient } from "mongodb";
import { startFakeLangfuse } from "../../fixtures/langfuse.js";
import { startFakeMongo } from "../../fixtures/mongo-wire.js";
import { startFakePresidio } from "../../fixtures/presidio-analyzer.js";

/** What a stand-in image does, baked into it as STAND_IN. */
export type StandInRole =
  | {
      role: "http";
      port: number;
      health: string[];
      /** Variables that must be set (the real service refuses to start without them). */
      needs?: string[];
      /** Variables holding a URL (or `host:port/…`) whose host must accept a TCP connection. */
      requires?: string[];
      /** Variables naming a file that must exist in the container. */
      files?: string[];
      /** Further TCP ports it accepts connections on (e.g. ClickHouse's native 9000). */
      tcp?: number[];
      /** The contract fake answering the other paths. */
      fake?: "langfuse" | "presidio" | "minio" | "chat";
    }
  | { role: "mongo" }
  | { role: "mongo-shell" }
  | { role: "mc" };

const DEFAULT_PORTS: Record<string, number> = {
  "http:": 80,
  "https:": 443,
  "postgresql:": 5432,
  "postgres:": 5432,
  "redis:": 6379,
  "mongodb:": 27017,
  "clickhouse:": 9000,
};

/** Host and port of a URL-ish value: `scheme://user:pw@host:port/…` or `host:port/…`. */
function endpoint(value: string): { host: string; port: number } {
  const url = new URL(value.includes("://") ? value : `tcp://${value}`);
  return { host: url.hostname, port: Number(url.port) || DEFAULT_PORTS[url.protocol] || 0 };
}

function connects(host: string, port: number): Promise<string | undefined> {
  return new Promise((done) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.once("connect", () => {
      socket.destroy();
      done(undefined);
    });
    socket.once("timeout", () => {
      socket.destroy();
      done(`${host}:${port} timed out`);
    });
    socket.once("error", (e) => done(`${host}:${port}: ${e.message}`));
  });
}

async function problems(role: Extract<StandInRole, { role: "http" }>): Promise<string[]> {
  const out: string[] = [];
  for (const name of [...(role.needs ?? []), ...(role.requires ?? []), ...(role.files ?? [])])
    if (!process.env[name]) out.push(`${name} is not set`);
  for (const name of role.files ?? []) {
    const file = process.env[name];
    if (file && !existsSync(file)) out.push(`${name}: ${file} does not exist`);
  }
  for (const name of role.requires ?? []) {
    const value = process.env[name];
    if (!value) continue;
    const { host, port } = endpoint(value);
    const error = await connects(host, port);
    if (error) out.push(`${name}: ${error}`);
  }
  if (role.fake === "chat" && process.env.MONGO_URI) {
    const client = new MongoClient(process.env.MONGO_URI, { serverSelectionTimeoutMS: 3000 });
    try {
      await client.connect();
      await client.db().command({ ping: 1 });
    } catch (error) {
      out.push(`MONGO_URI: ${String(error)}`);
    } finally {
      await client.close().catch(() => {});
    }
  }
  return out;
}

/** Base URL of the contract fake behind an `http` role, if it has one. */
async function startFake(fake: Extract<StandInRole, { role: "http" }>["fake"]): Promise<string | undefined> {
  if (fake === "langfuse") {
    const publicKey = process.env.LANGFUSE_INIT_PROJECT_PUBLIC_KEY ?? "";
    const secretKey = process.env.LANGFUSE_INIT_PROJECT_SECRET_KEY ?? "";
    return (await startFakeLangfuse({ publicKey, secretKey })).url;
  }
  if (fake === "presidio") return (await startFakePresidio()).url;
  return undefined;
}

async function serveHttp(role: Extract<StandInRole, { role: "http" }>): Promise<void> {
  const fakeUrl = await startFake(role.fake);
  const buckets = new Set<string>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://stand-in").pathname;
    const answer = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(body);
    };
    if (role.health.includes(path) && (req.method === "GET" || req.method === "HEAD")) {
      void problems(role).then((p) => {
        if (p.length > 0) process.stderr.write(`stand-in unhealthy: ${p.join("; ")}\n`);
        answer(p.length === 0 ? 200 : 503, p.length === 0 ? "ok" : p.join("\n"));
      });
      return;
    }
    if (role.fake === "minio" && req.method === "PUT") {
      const expected = `${process.env.MINIO_ROOT_USER}:${process.env.MINIO_ROOT_PASSWORD}`;
      if (req.headers["x-stand-in-credentials"] !== expected) return answer(403, "InvalidAccessKeyId");
      const bucket = path.split("/")[1] ?? "";
      if (buckets.has(bucket)) return answer(409, "BucketAlreadyOwnedByYou");
      buckets.add(bucket);
      return answer(200, "");
    }
    if (!fakeUrl) return answer(404, `the stand-in has no route ${req.method} ${path}`);
    const upstream = http.request(
      new URL(req.url ?? "/", fakeUrl),
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", (e) => answer(502, String(e)));
    req.pipe(upstream);
  });
  server.listen(role.port, "0.0.0.0");
  for (const port of role.tcp ?? []) net.createServer((s) => s.end()).listen(port, "0.0.0.0");
  process.stdout.write(`stand-in listening on ${role.port}\n`);
}

async function mongoShell(): Promise<number> {
  const client = new MongoClient("mongodb://127.0.0.1:27017/?directConnection=true", {
    serverSelectionTimeoutMS: 5000,
  });
  try {
    await client.connect();
    const answer = await client.db("admin").command({ ping: 1 });
    return answer.ok === 1 ? 0 : 1;
  } catch (error) {
    process.stderr.write(`${String(error)}\n`);
    return 1;
  } finally {
    await client.close().catch(() => {});
  }
}

async function mc(args: string[]): Promise<number> {
  const positional = args.filter((a) => !a.startsWith("--"));
  if (positional[0] !== "mb" || !positional[1]) {
    process.stderr.write(`mc stand-in: only \`mb <alias>/<bucket>\` is supported, got ${args.join(" ")}\n`);
    return 2;
  }
  const [alias, bucket] = positional[1].split("/");
  const host = process.env[`MC_HOST_${alias}`];
  if (!host || !bucket) {
    process.stderr.write(`mc: alias ${alias} has no MC_HOST_${alias}\n`);
    return 1;
  }
  const url = new URL(host);
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  const target = `${url.protocol}//${url.host}/${bucket}`;
  try {
    const r = await fetch(target, { method: "PUT", headers: { "x-stand-in-credentials": credentials } });
    if (r.ok || (r.status === 409 && args.includes("--ignore-existing"))) {
      process.stdout.write(`Bucket created successfully \`${alias}/${bucket}\`.\n`);
      return 0;
    }
    process.stderr.write(`mc: PUT ${target} answered ${r.status} ${await r.text()}\n`);
  } catch (error) {
    process.stderr.write(`mc: PUT ${target}: ${String(error)}\n`);
  }
  return 1;
}

async function main(): Promise<void> {
  const role = JSON.parse(process.env.STAND_IN ?? "{}") as StandInRole;
  if (role.role === "http") return serveHttp(role);
  if (role.role === "mongo") {
    const user = process.env.MONGO_INITDB_ROOT_USERNAME;
    const password = process.env.MONGO_INITDB_ROOT_PASSWORD;
    if (!user || !password) throw new Error("MONGO_INITDB_ROOT_USERNAME and _PASSWORD must be set");
    await startFakeMongo({
      user,
      password,
      host: "0.0.0.0",
      port: 27017,
      dataFile: "/data/db/stand-in.json",
    });
    process.stdout.write("mongo stand-in listening on 27017\n");
    return;
  }
  if (role.role === "mongo-shell") process.exit(await mongoShell());
  if (role.role === "mc") process.exit(await mc(process.argv.slice(2)));
  throw new Error(`STAND_IN names no known role: ${process.env.STAND_IN}`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
