import { describe, expect, it } from "vitest";
import { seriesKey } from "../../../../services/gateway/src/metrics/series-store.js";

describe("seriesKey", () => {
  it("keys label values without ambiguity", () => {
    expect(seriesKey(["a|1:b", "c"])).not.toBe(seriesKey(["a", "b|1:c"]));
    expect(seriesKey(["ab", ""])).not.toBe(seriesKey(["a", "b"]));
  });
});
