import { describe, expect, it } from "vitest";
import { StreamText } from "../../../../services/gateway/src/streaming/stream-text.js";

describe("StreamText", () => {
  it("keeps the first choice's text of chat chunks and the pieces of a native stream up to its cap, marked when cut", () => {
    const text = new StreamText(10);
    text.add(JSON.stringify({ choices: [{ index: 0, delta: { content: "Hello " } }] }));
    text.add(JSON.stringify({ choices: [{ index: 1, delta: { content: "other choice" } }] }));
    text.addText("world, and more");
    text.addText("never kept");
    expect(text.value()).toBe("Hello worl… [cut at 10 characters]");
  });

  it("ignores [DONE] and payloads that are not JSON", () => {
    const text = new StreamText();
    text.add("[DONE]");
    text.add('{"content": not json');
    text.addText("ok");
    expect(text.value()).toBe("ok");
  });
});
