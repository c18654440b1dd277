/**
 * Response ownership through two whole gateway instances sharing one Postgres (createGateway, virtual keys made
 * with the admin API): a response key A created on one instance is found at once by the other, for A's
 * `GET /v1/responses/{id}` and `previous_response_id`, and refused there to key B (404, nothing upstream).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../fixtures/openai-responses.js";
import { adminCall, deployment, startTestGateway, type TestGateway } from "../../../helpers/gateway.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/postgres.js";
import { rejectionOf } from "../../../helpers/rejection.js";

let upstream: FakeResponsesUpstream;
let db: TestDatabase;
let one: TestGateway;
let two: TestGateway;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  upstream = await startFakeResponsesUpstream();
  db = await createTestDatabase();
  const config = `model_list:\n${deployment("general", upstream.url, '    model_info:\n      supported_endpoints: ["/v1/responses"]\n')}`;
  one = await startTestGateway(config, { DATABASE_URL: db.url });
  two = await startTestGateway(config, { DATABASE_URL: db.url });
  const newKey = async () => (await adminCall<{ key: string }>(one, "POST", "/key/generate", {})).body.key;
  keyA = await newKey();
  keyB = await newKey();
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await upstream?.close();
  await db?.drop();
});

describe("response ownership across gateway instances", () => {
  it("A's response made on one instance: A reads and continues it on the other, B gets 404 there", async () => {
    const created = await one.clientWith(keyA).responses.create({ model: "general", input: "remember 7" });
    const onTwo = two.clientWith(keyA);
    expect((await onTwo.responses.retrieve(created.id)).id).toBe(created.id);
    const next = await onTwo.responses.create({
      model: "general",
      input: "and?",
      previous_response_id: created.id,
    });
    expect(next.previous_response_id).toBe(created.id);

    const before = upstream.requests.length;
    const b = two.clientWith(keyB);
    await rejectionOf(b.responses.retrieve(created.id), OpenAI.NotFoundError);
    const error = await rejectionOf(
      b.responses.create({ model: "general", input: "peek", previous_response_id: created.id }),
      OpenAI.NotFoundError,
    );
    expect(error.error).toMatchObject({ code: "previous_response_not_found" });
    expect(upstream.requests.length).toBe(before);
  });
});
