/**
 * The program inside the stack rehearsal's stand-in images for third-party services Debian does not package
 * (bundled with esbuild into /opt/stand-in/server.mjs). The image bakes its role as the STAND_IN environment
 * variable (a {@link StandInRole} in JSON); the container's own environment is the one the Pulumi program declares.
 *
 * Roles:
 * - `http`: listens on `port`, answers `health` paths 200 only when every `needs` variable is set, every `files`
 *   variable names an existing file and every `requires` variable's URL accepts a TCP connection (else 503 naming
 *   what is missing); other paths go to the contract fake `fake` (test/fixtures), when there is one, or to the
 *   tests' MCP server made with the official SDK (`mcp`, test/helpers/mcp-server.ts).
 * - `mongo`: the MongoDB 4.4 wire fake on 27017 with MONGO_INITDB_ROOT_USERNAME / _PASSWORD, data in /data/db.
 * - `mongo-shell`: the legacy `mongo` shell's health-check use: `--eval` of a ping, exit 0 when it answers ok.
 * - `mongodump` / `mongorestore`: what scripts/platform.sh's backup and restore call (`--archive --gzip`, the
 *   root user's `-u`/`-p`, `--authenticationDatabase admin`): they authenticate against the wire fake as the
 *   real tools do, then write the fake's data file gzipped to stdout, or replace it (`--drop`) with the gzipped
 *   archive read from stdin (the fake reads the file before every command). A stand-in of the Mongo half of a
 *   backup: not MongoDB's archive format.
 * - `mc`: MinIO's client for `mb [--ignore-existing] <alias>/<bucket>` with the alias from MC_HOST_<alias>.
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { parseArgs } from "node:util";
import { gunzipSync, gzipSync } from "node:zlib";
import { EJSON } from "bson";
import { MongoClient } from "mongodb";
import { startFakeLangfuse } from "../../fixtures/langfuse.js";
import { startFakeMongo } from "../../fixtures/mongo-wire.js";
import { startFakeUpstream } from "../../fixtures/openai-upstream.js";
import { startFakePresidio } from "../../fixtures/presidio-analyzer.js";
import { startMcpServer } from "../../helpers/mcp-server.js";

/** The wire fake's data file in the mongo stand-in (its volume is declared at /data/db). */
const MONGO_DATA_FILE = "/data/db/stand-in.json";

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
      fake?: "langfuse" | "presidio" | "minio" | "chat" | "openai" | "mcp";
    }
  | { role: "mongo" }
  | { role: "mongo-shell" }
  | { role: "mongodump" }
  | { role: "mongorestore" }
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
  // An OpenAI-compatible model server; UPSTREAM_API_KEY set: requests must carry it as their bearer token.
  if (fake === "openai")
    return (await startFakeUpstream({ apiKey: process.env.UPSTREAM_API_KEY, record: false })).url;
  // A real MCP server made with the official SDK (Streamable HTTP on /mcp; the tests' server: echo, add, …).
  if (fake === "mcp") return (await startMcpServer()).url;
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

/**
 * `mongodump` / `mongorestore` with `--archive --gzip`: authenticate as `-u`/`-p` against the local fake, then
 * dump or replace its data file (stdout / stdin).
 */
async function mongoTool(tool: "mongodump" | "mongorestore", args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: false,
    options: {
      username: { type: "string", short: "u" },
      password: { type: "string", short: "p" },
      authenticationDatabase: { type: "string" },
    },
  });
  if (!args.includes("--archive") || !args.includes("--gzip")) {
    process.stderr.write(`${tool} stand-in: only --archive --gzip (stdin/stdout) is supported\n`);
    return 2;
  }
  const auth = `${encodeURIComponent(String(values.username ?? ""))}:${encodeURIComponent(String(values.password ?? ""))}`;
  const client = new MongoClient(
    `mongodb://${auth}@127.0.0.1:27017/?directConnection=true&authSource=${values.authenticationDatabase ?? "admin"}`,
    { serverSelectionTimeoutMS: 5000 },
  );
  try {
    await client.connect();
    await client.db("admin").command({ ping: 1 });
  } catch (error) {
    process.stderr.write(`${tool}: ${String(error)}\n`);
    return 1;
  } finally {
    await client.close().catch(() => {});
  }
  if (tool === "mongodump") {
    const data = existsSync(MONGO_DATA_FILE) ? readFileSync(MONGO_DATA_FILE) : Buffer.from("{}");
    process.stdout.write(gzipSync(data));
    return 0;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = gunzipSync(Buffer.concat(chunks)).toString("utf8");
  EJSON.parse(text); // refuses an archive that is not the fake's data
  writeFileSync(MONGO_DATA_FILE, text);
  return 0;
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
      dataFile: MONGO_DATA_FILE,
    });
    process.stdout.write("mongo stand-in listening on 27017\n");
    return;
  }
  if (role.role === "mongo-shell") process.exit(await mongoShell());
  if (role.role === "mongodump" || role.role === "mongorestore")
    process.exit(await mongoTool(role.role, process.argv.slice(2)));
  if (role.role === "mc") process.exit(await mc(process.argv.slice(2)));
  throw new Error(`STAND_IN names no known role: ${process.env.STAND_IN}`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
