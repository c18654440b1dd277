import { describe, expect, it } from "vitest";
import { chunkText } from "../../../../services/gateway/src/streaming/output-meter.js";
import { plainContentChunk } from "../../../../services/gateway/src/streaming/plain-chunk.js";

const head = `"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini"`;

describe("plainContentChunk", () => {
  it("reads the content and index of OpenAI's plain content chunks as JSON.parse does", () => {
    const chunks = [
      `{${head},"choices":[{"index":0,"delta":{"content":" fox"},"finish_reason":null}]}`,
      `{${head},"system_fingerprint":"fp_1","choices":[{"index":2,"delta":{"content":"a \\"quote\\" \\\\ \\u00e9 😀\\n"},"logprobs":null,"finish_reason":null}],"usage":null}`,
      `{${head},"system_fingerprint":null,"choices":[{"index":0,"delta":{"content":""},"finish_reason":null,"logprobs":null}]}`,
    ];
    for (const data of chunks) {
      const parsed = JSON.parse(data);
      expect(plainContentChunk(data)).toEqual({ index: parsed.choices[0].index, text: chunkText(parsed) });
    }
  });

  it("leaves every other chunk to the full parse", () => {
    const others = [
      `{${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}],"usage":{"prompt_tokens":1}}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null},{"index":1,"delta":{"content":"y"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x","refusal":"no"},"finish_reason":null}]}`,
      `{${head}, "choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"bad \\q escape"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"raw\u0001control"},"finish_reason":null}]}`,
      `{${head},"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}trailing`,
      `{${head},"service_tier":"default","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
    ];
    for (const data of others) expect(plainContentChunk(data), data).toBeUndefined();
  });
});
