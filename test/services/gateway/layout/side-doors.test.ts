/**
 * No side doors: every route the model endpoints register (`services/gateway/src/endpoints/`, the `modelRoutes`
 * plugin) runs the pipeline (route config `pipeline: true`: limits, guardrails, request counters), or is listed
 * with its reason in `offPipelineRoutes`; and every route the whole app registers (`buildApp`, with `/mcp` and
 * the admin API) does too, or is listed with its reason in `appRoutesBesidePipeline`. A new route registered
 * beside the pipeline fails here until it is moved onto the pipeline or listed (with why it is safe).
 */
import Fastify, { type FastifyInstance, type RouteOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../../../services/gateway/src/app.js";
import { loadModelConfig } from "../../../../services/gateway/src/config/load-model-config.js";
import { modelRoutes, offPipelineRoutes } from "../../../../services/gateway/src/endpoints/index.js";
import { createMetrics } from "../../../../services/gateway/src/metrics/metrics.js";
import { Router } from "../../../../services/gateway/src/router/router.js";
import { adminNeedsDatabase } from "../../../../services/gateway/src/routes/admin/index.js";
import { appRoutesBesidePipeline } from "../../../../services/gateway/src/routes/beside-pipeline.js";
import { systemClock } from "../../../../services/gateway/src/time/clock.js";
import { deployment, writeConfig } from "../../../helpers/gateway.js";

interface Registered {
  method: string;
  url: string;
  pipeline: boolean;
}

function testRouter() {
  const config = loadModelConfig(
    writeConfig(`model_list:\n${deployment("general", "http://127.0.0.1:9/v1")}`),
  );
  const metrics = createMetrics();
  return { router: new Router(config, metrics, systemClock), metrics };
}

/** Collects the routes `app` registers from now on (HEAD routes fastify adds for each GET left out). */
function collectRoutes(app: FastifyInstance): Registered[] {
  const routes: Registered[] = [];
  app.addHook("onRoute", (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = route.config as { pipeline?: boolean } | undefined;
    for (const method of methods) {
      if (method !== "HEAD") routes.push({ method, url: route.url, pipeline: config?.pipeline === true });
    }
  });
  return routes;
}

/** The routes `modelRoutes` registers. */
async function registeredRoutes(): Promise<Registered[]> {
  const { router, metrics } = testRouter();
  const app = Fastify();
  const routes = collectRoutes(app);
  await app.register(modelRoutes, {
    router,
    metrics,
    clock: systemClock,
    admitter: undefined,
    spend: undefined,
    guard: undefined,
    observers: [],
  });
  await app.ready();
  await app.close();
  return routes;
}

/** Every route the gateway's app registers, with `/mcp` and the admin API (as without a database). */
async function appRoutes(): Promise<Registered[]> {
  const { router, metrics } = testRouter();
  const app = buildApp({
    router,
    metrics,
    clock: systemClock,
    masterKey: "sk-side-doors-master-key",
    maxBodyBytes: 1_000_000,
    readiness: [],
    version: "test",
    mcp: { upstreams: [], guard: undefined },
    adminRoutes: adminNeedsDatabase,
  });
  // Plugins load on ready(): the hook sees every route they register.
  const routes = collectRoutes(app);
  await app.ready();
  await app.close();
  return routes;
}

/** Routes neither on the pipeline nor listed, as `METHOD url`. */
function sideDoors(
  routes: readonly Registered[],
  listed: readonly { method: string; url: string }[],
): string[] {
  const allowed = new Set(listed.map((r) => `${r.method} ${r.url}`));
  return routes
    .filter((r) => !r.pipeline && !allowed.has(`${r.method} ${r.url}`))
    .map((r) => `${r.method} ${r.url}`);
}

describe("routes beside the pipeline", () => {
  it("finds an unlisted route (the check itself)", () => {
    const routes = [
      { method: "POST", url: "/v1/chat/completions", pipeline: true },
      { method: "GET", url: "/v1/listed", pipeline: false },
      { method: "POST", url: "/v1/side-door", pipeline: false },
    ];
    expect(sideDoors(routes, [{ method: "GET", url: "/v1/listed" }])).toEqual(["POST /v1/side-door"]);
  });

  it("every route under endpoints/ runs the pipeline or is listed in offPipelineRoutes", async () => {
    const routes = await registeredRoutes();
    expect(routes.filter((r) => r.pipeline).map((r) => r.url)).toContain("/v1/messages/count_tokens");
    expect(sideDoors(routes, offPipelineRoutes)).toEqual([]);
  });

  it("lists only routes that exist and are off the pipeline, each with its reason", async () => {
    const offPipeline = (await registeredRoutes())
      .filter((r) => !r.pipeline)
      .map((r) => `${r.method} ${r.url}`);
    expect(offPipelineRoutes.map((r) => `${r.method} ${r.url}`).sort()).toEqual(offPipeline.sort());
    for (const route of offPipelineRoutes) expect(route.why.length).toBeGreaterThan(20);
  });

  it("every route the app registers runs the pipeline or is listed with its reason", async () => {
    const routes = await appRoutes();
    const listed = [...offPipelineRoutes, ...appRoutesBesidePipeline];
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(["POST /mcp", "POST /key/generate", "POST /v1/chat/completions"]),
    );
    expect(sideDoors(routes, listed)).toEqual([]);
    const offPipeline = routes.filter((r) => !r.pipeline).map((r) => `${r.method} ${r.url}`);
    expect(listed.map((r) => `${r.method} ${r.url}`).sort()).toEqual(offPipeline.sort());
    for (const route of appRoutesBesidePipeline) expect(route.why.length).toBeGreaterThan(20);
    expect(appRoutesBesidePipeline.find((r) => r.method === "POST" && r.url === "/mcp")?.why).toMatch(
      /admit/,
    );
  });
});
