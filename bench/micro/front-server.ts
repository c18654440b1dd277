/**
 * The server half of `bench/micro/http-front.ts`: one HTTP front on 127.0.0.1 answering
 * `POST /v1/chat/completions` with a fixed chat completion, built as `BENCH_FRONT` says:
 *
 * - `fastify`: fastify with the gateway's hook set on the route (an async `onRequest` reading the bearer token,
 *   fastify's default JSON parser wrapped to keep the body's text as `plugins/json-body.ts` does, an async
 *   `onSend` adding `x-request-id`, an async `onResponse` as the pipeline's request counting), no logger;
 * - `fastify-sync`: the same with callback hooks and `x-request-id` set in `onRequest` (no `onSend`);
 * - `fastify-pino`: `fastify` with a pino logger at warn, as the gateway runs (fastify makes a child logger per
 *   request); `fastify-pino-shared`: the same with `childLoggerFactory` handing out the app's logger itself;
 * - `node`: a bare `node:http` handler doing the same work by hand (read the body, secure-json-parse with the
 *   same options, the same headers), i.e. what a lean front in front of fastify would pay.
 *
 * Neither calls an upstream: the difference between the two is what fastify itself adds to a model call.
 * Prints `{"ready":true,"port":N}` once listening.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyBaseLogger } from "fastify";
import pino from "pino";
import secureJson from "secure-json-parse";

const ANSWER = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1700000000,
  model: "fake-model",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
});

/** Work both fronts do per request besides HTTP: read the key, keep the parsed body and its text. */
const seen = { auth: "", members: 0 };

async function fastifyFront(hooks: "async" | "sync", log: "none" | "pino" | "pino-shared"): Promise<Server> {
  const loggerInstance = pino({ level: "warn" });
  const app = Fastify({
    ...(log === "none" ? { logger: false } : { loggerInstance }),
    ...(log === "pino-shared" ? { childLoggerFactory: (logger: FastifyBaseLogger) => logger } : {}),
    requestIdHeader: false,
    genReqId: () => randomUUID(),
    disableRequestLogging: true,
  });
  app.decorateRequest("auth", undefined);
  app.decorateRequest("jsonText", undefined);
  const parse = app.getDefaultJsonParser("error", "ignore");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    parse(request, body as string, (error, value) => {
      (request as unknown as { jsonText: string }).jsonText = body as string;
      done(error ?? null, value);
    });
  });
  if (hooks === "async") {
    app.addHook("onRequest", async (request) => {
      (request as unknown as { auth: string | undefined }).auth = request.headers.authorization;
    });
    app.addHook("onSend", async (request, reply) => {
      reply.header("x-request-id", request.id);
    });
    app.addHook("onResponse", async (request) => {
      if (request.routeOptions.config.url !== undefined) seen.members++;
    });
  } else {
    app.addHook("onRequest", (request, reply, done) => {
      (request as unknown as { auth: string | undefined }).auth = request.headers.authorization;
      reply.header("x-request-id", request.id);
      done();
    });
    app.addHook("onResponse", (request, _reply, done) => {
      if (request.routeOptions.config.url !== undefined) seen.members++;
      done();
    });
  }
  app.post("/v1/chat/completions", { config: {} }, async (request, reply) => {
    seen.auth = (request as unknown as { auth: string }).auth;
    return reply
      .header("content-type", "application/json")
      .header("x-litellm-response-cost", "0.0000123")
      .send(ANSWER);
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  return app.server;
}

function nodeFront(): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "ignore" });
      seen.auth = request.headers.authorization ?? "";
      seen.members += body === null ? 0 : 1;
      response.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(ANSWER),
        "x-litellm-response-cost": "0.0000123",
        "x-request-id": randomUUID(),
      });
      response.end(ANSWER);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const kind = process.env.BENCH_FRONT;
const fronts: Record<string, () => Promise<Server>> = {
  node: nodeFront,
  fastify: () => fastifyFront("async", "none"),
  "fastify-sync": () => fastifyFront("sync", "none"),
  "fastify-pino": () => fastifyFront("async", "pino"),
  "fastify-pino-shared": () => fastifyFront("async", "pino-shared"),
};
const start = kind === undefined ? undefined : fronts[kind];
if (start === undefined) throw new Error(`BENCH_FRONT must be one of ${Object.keys(fronts).join(", ")}`);
const server = await start();
process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`);
