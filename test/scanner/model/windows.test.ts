import { describe, expect, it } from "vitest";
import { tokenWindows } from "../../../scanner/src/model/windows.js";

describe("tokenWindows", () => {
  it("gives one window for a sequence that fits, and one empty window for an empty one", () => {
    expect(tokenWindows(510, 510, 128)).toEqual([{ start: 0, end: 510 }]);
    expect(tokenWindows(0, 510, 128)).toEqual([{ start: 0, end: 0 }]);
  });

  it("advances by size - overlap and ends exactly at the last token", () => {
    expect(tokenWindows(1000, 510, 128)).toEqual([
      { start: 0, end: 510 },
      { start: 382, end: 892 },
      { start: 764, end: 1000 },
    ]);
  });

  it("covers every token, and every run of `overlap` consecutive tokens lies inside one window", () => {
    for (const [length, size, overlap] of [
      [2_500, 510, 128],
      [511, 510, 0],
      [9_999, 100, 49],
      [7, 3, 1],
    ] as const) {
      const windows = tokenWindows(length, size, overlap);
      expect(windows.at(-1)!.end).toBe(length);
      for (const w of windows) expect(w.end - w.start).toBeLessThanOrEqual(size);
      const run = Math.max(overlap, 1);
      for (let at = 0; at + run <= length; at++) {
        const inside = windows.some((w) => w.start <= at && at + run <= w.end);
        expect(inside, `tokens ${at}..${at + overlap} of ${length} (size ${size}, overlap ${overlap})`).toBe(
          true,
        );
      }
    }
  });

  it("refuses a size or overlap that would never advance", () => {
    expect(() => tokenWindows(10, 0, 0)).toThrow(RangeError);
    expect(() => tokenWindows(10, 5, 5)).toThrow("window overlap must be an integer in [0, 5), got 5");
  });
});
