import { describe, expect, it } from "vitest";
import { plainMessagesDelta } from "../../../../services/gateway/src/endpoints/messages/native-events.js";
import { plainResponsesDelta } from "../../../../services/gateway/src/endpoints/responses/native-events.js";

/** `read(data)` is the object `JSON.parse(data)` gives: the same members, values and order. */
function expectParsed(read: (data: string) => unknown, data: string) {
  const json = read(data);
  expect(json, data).toStrictEqual(JSON.parse(data));
  expect(JSON.stringify(json), data).toBe(JSON.stringify(JSON.parse(data)));
}

const text = '"a \\"quote\\" \\\\ \\u00e9 😀\\n"';

describe("plainResponsesDelta", () => {
  const at = '"sequence_number":12,"item_id":"msg_1","output_index":1,"content_index":0';
  const delta = (members: string) => `{"type":"response.output_text.delta",${members}}`;

  it("reads OpenAI's plain response.output_text.delta events as JSON.parse does", () => {
    for (const data of [
      delta(`${at},"delta":" fox","logprobs":[]`),
      delta(`${at},"delta":${text},"logprobs":[],"obfuscation":"aB3x"`),
      delta(`${at},"delta":"","logprobs":[]`),
    ])
      expectParsed(plainResponsesDelta, data);
  });

  it("leaves every other event to the full parse", () => {
    for (const data of [
      delta(`${at},"delta":"x","logprobs":[{"token":"x"}]`),
      delta(`${at},"delta":"x"`),
      delta(
        `"sequence_number":012,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"x","logprobs":[]`,
      ),
      delta(`${at},"delta":"bad \\q escape","logprobs":[]`),
      delta(`${at},"delta":"raw\u0001control","logprobs":[]`),
      delta(
        `"sequence_number":1,"item_id":"msg\u0001","output_index":0,"content_index":0,"delta":"x","logprobs":[]`,
      ),
      `${delta(`${at},"delta":"x","logprobs":[]`)}trailing`,
      delta(`${at},"delta":"x","logprobs":[],"extra":1`),
      `{"type":"response.refusal.delta",${at},"delta":"x","logprobs":[]}`,
      `{"type":"response.output_text.delta", ${at},"delta":"x","logprobs":[]}`,
    ])
      expect(plainResponsesDelta(data), data).toBeUndefined();
  });
});

describe("plainMessagesDelta", () => {
  const delta = (index: string, inner: string) =>
    `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta",${inner}}}`;

  it("reads Anthropic's plain text_delta events as JSON.parse does", () => {
    for (const data of [delta("0", '"text":" fox"'), delta("3", `"text":${text}`), delta("10", '"text":""')])
      expectParsed(plainMessagesDelta, data);
  });

  it("leaves every other event to the full parse", () => {
    for (const data of [
      delta("01", '"text":"x"'),
      delta("0", '"text":"bad \\q escape"'),
      delta("0", '"text":"raw\u0001control"'),
      delta("0", '"text":"x","extra":1'),
      `${delta("0", '"text":"x"')}trailing`,
      '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}',
      '{"type":"content_block_delta","index":0,"delta":{"text":"x","type":"text_delta"}}',
      '{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"x"}}',
    ])
      expect(plainMessagesDelta(data), data).toBeUndefined();
  });
});
