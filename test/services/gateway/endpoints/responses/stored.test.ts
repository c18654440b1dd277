/**
 * The stored-response routes (`GET`/`DELETE /v1/responses/{id}`, `GET …/input_items`, `POST …/cancel`, and the
 * `/responses/…` aliases) in front of a native Responses upstream (the fake stores every response it gives):
 * the key that created a response has its request forwarded to the deployment that served it, with the
 * deployment's own key; any other key, and an id the gateway never relayed, get OpenAI's 404 for an unknown
 * response, and nothing goes upstream. The master key may read any. The key is checked first.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import type { FakeResponsesUpstream } from "../../../../fixtures/openai-responses.js";
import { rejectionOf } from "../../../../helpers/rejection.js";
import { keySubject } from "../../limits/subjects.js";
import type { ChatHarness } from "../chat-completions/harness.js";
import { VIRTUAL_KEY } from "../chat-completions/harness.js";
import {
  KEY_B,
  MASTER,
  type OwnersHarness,
  startOwnersHarness,
  streamedId,
  UPSTREAM_KEY,
} from "./owners-harness.js";

let harness: OwnersHarness;
let upstream: FakeResponsesUpstream;
let gw: ChatHarness;
let a: OpenAI;
let b: OpenAI;

beforeAll(async () => {
  harness = await startOwnersHarness();
  ({ upstream, gw, a, b } = harness);
});
afterAll(() => harness?.close());

const call = (key: string, method: string, path: string) =>
  fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });

/** OpenAI's 404 for a response it does not hold, as the gateway gives it. */
const notFound = (id: string) => ({
  error: {
    message: `No response found with id '${id}'.`,
    type: "invalid_request_error",
    param: null,
    code: "not_found",
  },
});

describe("stored responses: the owner's requests go to the deployment that served them", () => {
  it("GET by the key that created it: forwarded with the deployment's key, the upstream's response returned", async () => {
    const created = await a.responses.create({ model: "general", input: "keep me", store: true });
    const got = await a.responses.retrieve(created.id);
    expect(got).toMatchObject({ id: created.id, object: "response", output: created.output });
    const sent = upstream.requests.at(-1)!;
    expect(sent).toMatchObject({ method: "GET", path: `/v1/responses/${created.id}` });
    expect(sent.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it("GET of a streamed response (its id recorded from the events) works for its owner", async () => {
    const id = await streamedId(a, "stream me");
    expect((await a.responses.retrieve(id)).id).toBe(id);
    expect((await call(KEY_B, "GET", `/v1/responses/${id}`)).status).toBe(404);
  });

  it("input_items (with the client's query string), the /responses alias and cancel are forwarded as well", async () => {
    const created = await a.responses.create({ model: "general", input: "list my input" });
    const items = await call(VIRTUAL_KEY, "GET", `/v1/responses/${created.id}/input_items?limit=5&order=asc`);
    expect(items.status).toBe(200);
    expect(await items.json()).toMatchObject({
      object: "list",
      data: [{ type: "message", role: "user", content: [{ type: "input_text", text: "list my input" }] }],
    });
    expect(upstream.requests.at(-1)?.path).toBe(`/v1/responses/${created.id}/input_items?limit=5&order=asc`);
    const alias = await call(VIRTUAL_KEY, "GET", `/responses/${created.id}`);
    expect(alias.status).toBe(200);
    expect(alias.headers.get("x-litellm-model-id")).toBe("native-1");
    // The upstream's own refusal keeps its status (only background responses can be cancelled), in the gateway's
    // error for an upstream's refusal.
    const cancel = await call(VIRTUAL_KEY, "POST", `/v1/responses/${created.id}/cancel`);
    expect(cancel.status).toBe(400);
    expect(await cancel.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "400", message: expect.stringMatching(/answered 400/) },
    });
    expect(upstream.requests.at(-1)).toMatchObject({
      method: "POST",
      path: `/v1/responses/${created.id}/cancel`,
    });
  });

  it("DELETE by another key: 404 and nothing upstream; by the owner: deleted upstream", async () => {
    const created = await a.responses.create({ model: "general", input: "delete me" });
    const before = upstream.requests.length;
    const refused = await call(KEY_B, "DELETE", `/v1/responses/${created.id}`);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual(notFound(created.id));
    expect(upstream.requests.length).toBe(before);
    const deleted = await a.responses.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: "response", deleted: true });
    expect(upstream.requests.at(-1)).toMatchObject({ method: "DELETE", path: `/v1/responses/${created.id}` });
  });

  it.each([
    ["GET", ""],
    ["GET", "/input_items"],
    ["POST", "/cancel"],
  ])("%s …%s by another key: OpenAI's 404, and nothing goes upstream", async (method, suffix) => {
    const created = await a.responses.create({ model: "general", input: "mine" });
    const before = upstream.requests.length;
    for (const base of ["/v1/responses", "/responses"]) {
      const response = await call(KEY_B, method, `${base}/${created.id}${suffix}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(notFound(created.id));
    }
    expect(upstream.requests.length).toBe(before);
  });

  it("an id the gateway never relayed: the same 404 for everyone (the SDK's NotFoundError)", async () => {
    const before = upstream.requests.length;
    const error = await rejectionOf(a.responses.retrieve("resp_never_relayed"), OpenAI.NotFoundError);
    expect(error.error).toEqual(notFound("resp_never_relayed").error);
    expect((await call(MASTER, "GET", "/v1/responses/resp_never_relayed")).status).toBe(404);
    expect(upstream.requests.length).toBe(before);
  });

  it("the master key may read any key's response", async () => {
    const created = await b.responses.create({ model: "general", input: "b's own" });
    const response = await call(MASTER, "GET", `/v1/responses/${created.id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: created.id });
  });

  it("checks the key first", async () => {
    const response = await fetch(`${gw.url}/v1/responses/resp_1`);
    expect(response.status).toBe(401);
  });
});

describe("a response whose answer an output guard masked", () => {
  it("is neither retrievable nor continuable: the upstream stored the unmasked answer", async () => {
    // An output guard that masks the echo of "secret" (the gateway's guard seam, as the PII guard uses it).
    const masking: CallGuard = {
      checkInput: async () => ({ decisions: [], rewritten: false }),
      async checkOutput(call, answer, texts) {
        let rewritten = false;
        for (const slot of texts(answer as Record<string, unknown>)) {
          if (!slot.text.includes("secret")) continue;
          slot.set(slot.text.replaceAll("secret", "[MASKED]"));
          rewritten = true;
        }
        const action = rewritten ? "mask" : "allow";
        call.decisions.push({ guardrail: "pii", hook: "post_call", action, mode: "enforce", latencyMs: 0 });
        return { decisions: [], rewritten };
      },
      streamOutput: () => undefined,
    };
    const guarded = await startOwnersHarness({ guard: masking });
    try {
      const masked = await guarded.a.responses.create({ model: "general", input: "my secret" });
      expect(masked.output_text).toContain("[MASKED]");
      const before = guarded.upstream.requests.length;
      const read = await fetch(`${guarded.gw.url}/v1/responses/${masked.id}`, {
        headers: { authorization: `Bearer ${VIRTUAL_KEY}` },
      });
      expect(read.status).toBe(404);
      expect(guarded.upstream.requests.length).toBe(before);
      const continued = await guarded.a.responses
        .create({ model: "general", input: "go on", previous_response_id: masked.id })
        .catch((e: unknown) => e);
      expect((continued as { status?: number }).status).toBe(404);
      // An answer the guard left as it was stays the owner's to read.
      const plain = await guarded.a.responses.create({ model: "general", input: "hello" });
      expect((await guarded.a.responses.retrieve(plain.id)).id).toBe(plain.id);
    } finally {
      await guarded.close();
    }
  });
});

describe("rate limits", () => {
  it("count the stored-response routes: at rpm_limit 3, a create and two reads pass, the next read is refused", async () => {
    const limited = await startOwnersHarness({ subjects: [keySubject({ rpmLimit: 3 })] });
    try {
      const created = await limited.a.responses.create({ model: "general", input: "count me" });
      const read = () =>
        fetch(`${limited.gw.url}/v1/responses/${created.id}`, {
          headers: { authorization: `Bearer ${VIRTUAL_KEY}` },
        });
      expect((await read()).status).toBe(200);
      expect((await read()).status).toBe(200);
      const before = limited.upstream.requests.length;
      expect((await read()).status).toBe(429);
      expect(limited.upstream.requests.length).toBe(before);
    } finally {
      await limited.close();
    }
  });
});
