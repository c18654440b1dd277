import { describe, expect, it } from "vitest";
import {
  forwardable,
  scanJson,
  upstreamJson,
} from "../../../../../services/gateway/src/providers/openai-compatible/forward-json.js";

/** The top-level model's value as the scan located it. */
const modelToken = (text: string) => {
  const layout = scanJson(text);
  return layout === undefined ? undefined : text.slice(layout.modelStart, layout.modelEnd);
};

describe("scanJson", () => {
  it("finds the top-level model past strings full of quotes, backslashes and brackets", () => {
    const text = String.raw`{"a":"x\\","b":["\"model\":\"no\"", {"model":"nested"}],"c":"\\\"}","model" :  "m\"1" }`;
    expect(JSON.parse(text).model).toBe('m"1');
    expect(modelToken(text)).toBe(String.raw`"m\"1"`);
    expect(scanJson(text)).toMatchObject({ members: 5, close: text.length - 1 });
  });

  it("counts the members of every object, nested ones included", () => {
    expect(scanJson('{"model":"m","messages":[{"role":"u","content":"c"},{"role":"u"}]}')?.members).toBe(5);
  });

  it("gives up on a model that is missing, repeated, not a string, or behind an escaped key", () => {
    for (const text of [
      '{"messages":[]}',
      '{"model":"a","model":"b"}',
      '{"model":5}',
      String.raw`{"mod\u0065l":"a"}`,
      String.raw`{"model":"a","x\"y":1}`,
    ]) {
      expect(scanJson(text), text).toBeUndefined();
    }
  });
});

describe("upstreamJson", () => {
  const text = '{"model":"alias", "n":1}';
  const json = { text, model: "alias", modelStart: 9, modelEnd: 16, close: 23, append: "" };

  it("is the client's text itself when nothing changes", () => {
    expect(upstreamJson(json, "alias")).toBe(text);
  });

  it("splices a model name (JSON-escaped) and appends members before the closing brace", () => {
    expect(JSON.parse(upstreamJson(json, 'up"stream'))).toEqual({ model: 'up"stream', n: 1 });
    expect(upstreamJson({ ...json, append: ',"s":true' }, "alias")).toBe('{"model":"alias", "n":1,"s":true}');
  });
});

describe("forwardable", () => {
  /** The client's text and its parsed body, as the JSON body plugin gives them. */
  const client = (text: string) => {
    const body = JSON.parse(text);
    return { json: { text, members: scanJson(text)?.members ?? -1 }, body };
  };
  const cap = { name: "max_completion_tokens", value: 812 };

  it("appends the added member and the usage request to the client's own text", () => {
    const { json, body } = client('{"model":"m","stream":true}');
    const forwarded = forwardable(json, body, true, cap);
    expect(forwarded).toBeDefined();
    expect(JSON.parse(upstreamJson(forwarded!, "m"))).toEqual({
      model: "m",
      stream: true,
      max_completion_tokens: 812,
      stream_options: { include_usage: true },
    });
  });

  it("serialises instead when the body already has the added member's name, so that no name is given twice", () => {
    for (const text of [
      '{"model":"m","max_completion_tokens":null}',
      '{"model":"m","max_completion_tokens":5}',
    ]) {
      const { json, body } = client(text);
      expect(forwardable(json, body, false, cap), text).toBeUndefined();
      expect(forwardable(json, body, false), text).toBeDefined();
    }
  });
});
