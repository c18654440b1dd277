import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";

describe("GET /v1/models", () => {
  let empty: TestGateway;
  let two: TestGateway;
  beforeAll(async () => {
    empty = await startTestGateway("model_list: []\n");
    two = await startTestGateway(
      [
        "model_list:",
        deployment("general", "http://127.0.0.1:9/v1"),
        deployment("general", "http://127.0.0.1:10/v1"),
        deployment("small", "http://127.0.0.1:9/v1"),
      ].join("\n"),
    );
  });
  afterAll(async () => {
    await empty.close();
    await two.close();
  });

  it("answers an empty list when nothing is registered", async () => {
    const page = await empty.client.models.list();
    expect(page.data).toEqual([]);
  });

  it("lists each alias once, in OpenAI's shape, on /v1/models and /models", async () => {
    const page = await two.client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(["general", "small"]);
    expect(page.data[0]).toMatchObject({ object: "model", owned_by: "openai" });
    expect(typeof page.data[0]?.created).toBe("number");
    const res = await fetch(`${two.url}/models`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(2);
  });

  it("needs a key", async () => {
    expect((await fetch(`${two.url}/v1/models`)).status).toBe(401);
  });
});

describe("health", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway("model_list: []\n");
  });
  afterAll(() => gw.close());

  it("answers liveliness in plain text without a key", async () => {
    const res = await fetch(`${gw.url}/health/liveliness`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toBe("I'm alive!");
  });

  it("answers readiness as JSON with each dependency (details for the master key)", async () => {
    const res = await fetch(`${gw.url}/health/readiness`, {
      headers: { authorization: `Bearer ${MASTER_KEY}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "healthy", deployments: 0 });
    expect(typeof body.version).toBe("string");
  });

  it("answers unknown paths with an OpenAI-shaped 404", async () => {
    const res = await fetch(`${gw.url}/v1/nope`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});
