/** `GET /model/info` (LiteLLM's route): each deployment with the prices it is billed at, never its API key. */
import { modelInfoResponse } from "@platform/admin-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway(
    [
      "model_list:",
      "  - model_name: priced",
      "    litellm_params:",
      "      model: openai/house-model",
      "      api_base: http://127.0.0.1:9/v1",
      "      api_key: sk-upstream-secret-value",
      "      input_cost_per_token: 0.000002",
      "      output_cost_per_token: 0.000008",
      "      cache_read_input_token_cost: 0.0000005",
      "    model_info:",
      "      id: priced-1",
      "  - model_name: listed",
      "    litellm_params:",
      "      model: openai/gpt-4o-mini",
      "      api_base: http://127.0.0.1:9/v1",
      "",
    ].join("\n"),
  );
});
afterAll(() => gw.close());

const get = (path: string, key: string | null = MASTER_KEY) =>
  fetch(`${gw.url}${path}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });

describe("GET /model/info", () => {
  it("lists every deployment with its prices in LiteLLM's keys, config values as configured", async () => {
    const res = await get("/model/info");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain("sk-upstream-secret-value");
    expect(text).not.toContain("127.0.0.1");
    const body = modelInfoResponse.parse(JSON.parse(text));
    expect(body.data.map((d) => d.model_name)).toEqual(["priced", "listed"]);
    expect(body.data[0]).toEqual({
      model_name: "priced",
      litellm_params: { model: "openai/house-model" },
      model_info: {
        id: "priced-1",
        input_cost_per_token: 0.000002,
        output_cost_per_token: 0.000008,
        cache_read_input_token_cost: 0.0000005,
      },
    });
  });

  it("gives a list-priced model its catalogue prices, cache reads cheaper than fresh input", async () => {
    const listed = modelInfoResponse.parse(await (await get("/v1/model/info")).json()).data[1]?.model_info;
    expect(listed?.input_cost_per_token).toBeGreaterThan(0);
    expect(listed?.cache_read_input_token_cost).toBeGreaterThan(0);
    expect(listed?.cache_read_input_token_cost).toBeLessThan(listed?.input_cost_per_token ?? 0);
  });

  it("needs the master key", async () => {
    expect((await get("/model/info", null)).status).toBe(401);
  });
});
