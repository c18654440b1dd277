import { afterEach, describe, expect, it, vi } from "vitest";
import { ReleasedText } from "../../../../services/gateway/src/streaming/released-text.js";

const chunk = (content: string) => JSON.stringify({ choices: [{ index: 0, delta: { content } }] });

/** A ReleasedText collecting into `texts`, and the number of JSON.parse calls so far. */
function collector() {
  const texts: string[] = [];
  const parse = vi.spyOn(JSON, "parse");
  return { texts, released: new ReleasedText((t) => texts.push(t)), parses: () => parse.mock.calls.length };
}
afterEach(() => vi.restoreAllMocks());

describe("ReleasedText", () => {
  it("takes the text given for a payload written as read, and parses nothing", () => {
    const { texts, released, parses } = collector();
    released.written(chunk("a"), "a");
    released.written("[DONE]", "");
    expect(texts).toEqual(["a"]);
    expect(parses()).toBe(0);
  });

  it("pairs what the guard lets out with what it was handed: unchanged ones as read, rewritten ones parsed", () => {
    const { texts, released, parses } = collector();
    const handed = ["one ", "two ", "three ", "four"].map((w) => chunk(w));
    for (const [i, p] of handed.entries()) released.handed(p, ["one ", "two ", "three ", "four"][i]);
    released.written(handed[0]!);
    released.written(chunk("TWO ")); // rewritten
    released.written(handed[2]!);
    released.written(handed[3]!);
    expect(texts.join("")).toBe("one TWO three four");
    expect(parses()).toBe(1);
  });

  it("stays paired when the guard drops a payload or adds one", () => {
    const { texts, released, parses } = collector();
    const handed = ["a", "b", "c", "d"].map((w) => chunk(w));
    for (const [i, p] of handed.entries()) released.handed(p, "abcd"[i]);
    released.written(handed[0]!);
    // "b" dropped; a note added before "d".
    released.written(handed[2]!);
    released.written(chunk("[note]"));
    released.written(handed[3]!);
    expect(texts.join("")).toBe("ac[note]d");
    expect(parses()).toBe(1);
  });

  it("parses a payload handed over without its text, or never handed over", () => {
    const { texts, released, parses } = collector();
    released.handed(chunk("x"), undefined);
    released.written(chunk("x"));
    released.written(chunk("y"));
    expect(texts).toEqual(["x", "y"]);
    expect(parses()).toBe(2);
  });
});
