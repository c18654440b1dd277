/**
 * Nothing internal on public endpoints: /metrics behind METRICS_TOKEN and without upstream URLs in labels;
 * /health/readiness details (dependencies, their hosts, version) only for the master key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";

const METRICS_TOKEN = "metrics-token-for-the-test-0123";

describe("public endpoints", () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let open: TestGateway;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const config = `model_list:\n${deployment("general", upstream.url)}`;
    gw = await startTestGateway(config, {
      METRICS_TOKEN,
      // An unreachable Redis: readiness is degraded and its detail would name the host.
      REDIS_URL: "redis://internal-cache.example:6390",
    });
    open = await startTestGateway(config);
  });
  afterAll(async () => {
    await gw.close();
    await open.close();
    await upstream.close();
  });

  const metrics = (target: TestGateway, token?: string) =>
    fetch(
      `${target.url}/metrics`,
      token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
    );

  it("refuses /metrics without METRICS_TOKEN when it is set, and serves it with the token", async () => {
    expect((await metrics(gw)).status).toBe(401);
    expect((await metrics(gw, "wrong-token")).status).toBe(401);
    expect((await metrics(gw, MASTER_KEY)).status).toBe(401);
    const res = await metrics(gw, METRICS_TOKEN);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("litellm_deployment_state");
    expect((await metrics(open)).status).toBe(200);
  });

  const inject = (target: TestGateway, remoteAddress: string, token?: string) =>
    target.gateway.app.inject({
      method: "GET",
      url: "/metrics",
      remoteAddress,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  it("without METRICS_TOKEN serves /metrics to loopback callers only, and tells others to set it", async () => {
    for (const address of ["203.0.113.5", "10.0.0.7", "::ffff:10.1.2.3", "2001:db8::1", "128.0.0.1"]) {
      const res = await inject(open, address);
      expect(res.statusCode, address).toBe(403);
      const error = res.json().error;
      expect(error).toMatchObject({ type: "permission_error", code: "metrics_token_not_set", param: null });
      expect(error.message).toContain("METRICS_TOKEN");
      expect(res.body).not.toContain("litellm_");
    }
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) {
      const res = await inject(open, address);
      expect(res.statusCode, address).toBe(200);
      expect(res.body).toContain("litellm_deployment_state");
    }
  });

  it("with METRICS_TOKEN serves /metrics to any address that sends it, and to none that does not", async () => {
    expect((await inject(gw, "203.0.113.5", METRICS_TOKEN)).statusCode).toBe(200);
    expect((await inject(gw, "203.0.113.5")).statusCode).toBe(401);
    expect((await inject(gw, "127.0.0.1")).statusCode).toBe(401);
  });

  it("puts no upstream URL in any label, after calls that succeed and fail", async () => {
    await gw.client.chat.completions.create({
      model: "general",
      messages: [{ role: "user", content: "hi" }],
    });
    upstream.failNext(1, 500);
    await gw.client.chat.completions
      .create({ model: "general", messages: [{ role: "user", content: "hi" }] })
      .catch(() => undefined);
    const text = await (await metrics(gw, METRICS_TOKEN)).text();
    expect(text).toMatch(/^litellm_deployment_state\{/m);
    expect(text).not.toContain("api_base");
    expect(text).not.toContain(`127.0.0.1:${upstream.port}`);
  });

  it("answers /health/readiness with a bare status to everyone but the master key", async () => {
    const bare = await fetch(`${gw.url}/health/readiness`);
    expect(bare.status).toBe(200);
    expect(await bare.json()).toEqual({ status: "degraded" });
    const withVirtual = await fetch(`${gw.url}/health/readiness`, {
      headers: { authorization: "Bearer sk-not-the-master-key-000000" },
    });
    expect(await withVirtual.json()).toEqual({ status: "degraded" });
    const full = await fetch(`${gw.url}/health/readiness`, {
      headers: { authorization: `Bearer ${MASTER_KEY}` },
    });
    const body = (await full.json()) as Record<string, { status: string; detail?: string } | string | number>;
    expect(body).toMatchObject({ status: "degraded", deployments: 1, cache: { status: "degraded" } });
    expect(typeof body.version).toBe("string");
  });
});
