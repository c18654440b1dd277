/**
 * The response-ownership suites' gateway: the Responses fake behind `general` (a native deployment, `model_info.id`
 * `native-1`, upstream key {@link UPSTREAM_KEY}), two virtual keys (A: the harness key, B: {@link KEY_B}) and a
 * master key, with an OpenAI client per virtual key.
 */
import OpenAI from "openai";
import type { CallGuard } from "../../../../../services/gateway/src/guardrails/types.js";
import type { LimitSubject } from "../../../../../services/gateway/src/limits/types.js";
import {
  type FakeResponsesUpstream,
  startFakeResponsesUpstream,
} from "../../../../fixtures/openai-responses.js";
import { streamResponse } from "../../../../helpers/responses-stream.js";
import { type ChatHarness, startChatHarness, VIRTUAL_KEY } from "../chat-completions/harness.js";

/** Key B, the other owner (key A is the harness's VIRTUAL_KEY). */
export const KEY_B = "sk-virtual-other-owner";
export const MASTER = "sk-master-owners-test";
/** The deployment's own key, which the gateway adds upstream. */
export const UPSTREAM_KEY = "sk-upstream-responses";

export interface OwnersHarness {
  upstream: FakeResponsesUpstream;
  gw: ChatHarness;
  /** Clients of key A, key B and the master key. */
  a: OpenAI;
  b: OpenAI;
  master: OpenAI;
  close(): Promise<void>;
}

/** Starts the fake and the gateway (with `guard` as its guardrails and `subjects` as the key's limits, when given). */
export async function startOwnersHarness(
  options: { guard?: CallGuard; subjects?: LimitSubject[] } = {},
): Promise<OwnersHarness> {
  const { guard, subjects } = options;
  const upstream = await startFakeResponsesUpstream();
  const gw = await startChatHarness({
    upstreamUrl: upstream.url,
    extraParams: `      api_key: ${UPSTREAM_KEY}\n    model_info:\n      id: native-1\n      supported_endpoints: ["/v1/responses"]\n`,
    moreKeys: { [KEY_B]: "b".repeat(64) },
    masterKey: MASTER,
    ...(guard === undefined ? {} : { guard }),
    ...(subjects === undefined ? {} : { subjects }),
  });
  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  return {
    upstream,
    gw,
    a: client(VIRTUAL_KEY),
    b: client(KEY_B),
    master: client(MASTER),
    close: async () => {
      await gw.close();
      await upstream.close();
    },
  };
}

/** Streams a response with `client` and returns its id (read from `response.completed`). */
export async function streamedId(client: OpenAI, input: string): Promise<string> {
  const completed = (await streamResponse(client, { model: "general", input })).find(
    (event) => event.type === "response.completed",
  );
  return completed?.response.id ?? "";
}
