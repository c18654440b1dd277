/**
 * Bodies nested deeper than the gateway's limit are refused at parse time with a 400 naming the limit, on
 * every route; bodies within it are parsed as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../../../services/gateway/src/plugins/json-body.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, MASTER_KEY, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";

let upstream: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream({ record: false });
  gw = await startTestGateway(`model_list:\n${deployment("general", upstream.url)}`);
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

async function post(path: string, body: string, contentType = "application/json") {
  const res = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER_KEY}`, "content-type": contentType },
    body,
  });
  return { status: res.status, body: (await res.json()) as { error?: Record<string, unknown> } };
}

const chat = (extra: string) => `{"model":"general","messages":[{"role":"user","content":"hi"}],${extra}}`;

describe("JSON nesting depth", () => {
  it("refuses 10,000 levels in metadata, in messages and on the admin API with 400 json_too_deep", async () => {
    for (const [path, body, contentType] of [
      ["/v1/chat/completions", chat(`"metadata":{"a":${nested(10_000)}}`), "application/json"],
      [
        "/v1/chat/completions",
        `{"model":"general","messages":[{"role":"user","content":${nested(10_000)}}]}`,
        "application/json",
      ],
      ["/v1/chat/completions", chat(`"metadata":${nested(10_000)}`), "application/x-www-form-urlencoded"],
      ["/key/generate", `{"metadata":{"x":${nested(20_000)}}}`, "application/json"],
    ] as const) {
      const res = await post(path, body, contentType);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "json_too_deep" });
      expect(String(res.body.error?.message)).toContain(`limit is ${MAX_JSON_DEPTH}`);
    }
  });

  it("accepts a body nested within the limit, brackets inside strings not counted", async () => {
    const deepButAllowed = chat(`"metadata":{"a":${nested(MAX_JSON_DEPTH - 2)},"s":"${"[".repeat(500)}"}`);
    const res = await post("/v1/chat/completions", deepButAllowed);
    expect(res.status).toBe(200);
  });

  it("counts levels of the parsed value: brackets inside strings do not count, the first level too deep does", () => {
    expect(nestsDeeperThan(JSON.parse('{"a":"\\"[[[[","b":[[1]]}'), 3)).toBe(false);
    expect(nestsDeeperThan(JSON.parse('{"a":[[[1]]]}'), 3)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"a":[[[1]]]}'), 4)).toBe(false);
    expect(nestsDeeperThan(JSON.parse("[]"), 0)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('"a string"'), 0)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(nested(100_000)), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe("bodies on routes the gateway does not serve", () => {
  it("answers multipart/form-data and a body that is not JSON on an unknown route with the JSON 404", async () => {
    const form = new FormData();
    form.append("purpose", "batch");
    form.append("file", new Blob(["{}"], { type: "application/jsonl" }), "input.jsonl");
    for (const [path, body] of [
      ["/v1/files", form],
      ["/v1/audio/transcriptions", form],
      ["/v1/nowhere", "not json"],
    ] as const) {
      const res = await fetch(`${gw.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${MASTER_KEY}` },
        body,
      });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(await res.json()).toEqual({
        error: {
          message: `No route POST ${path}.`,
          type: "invalid_request_error",
          param: null,
          code: "not_found",
        },
      });
    }
  });

  it("still refuses a body that is not JSON on a served route with a 400", async () => {
    const res = await post("/v1/chat/completions", "not json", "text/x-anything");
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "invalid_request_error" });
  });
});
