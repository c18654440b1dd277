/**
 * The gateway's source has no import circle (type-only imports included): a module's dependencies never lead
 * back to it (the graph and the circle finder: test/helpers/import-graph.ts).
 */
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circles, importGraph } from "../../../helpers/import-graph.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../services/gateway/src");

describe("gateway source layout", () => {
  it("finds a circle when there is one (the detector itself)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(circles(graph).map((c) => c.sort())).toEqual([["a", "b", "c"]]);
  });

  it("has no import circle in services/gateway/src", () => {
    const graph = importGraph(root);
    expect(graph.size).toBeGreaterThan(100);
    const found = circles(graph).map((c) => c.map((f) => relative(root, f)).sort());
    expect(found).toEqual([]);
  });

  it("keeps each endpoint's folder to itself: no endpoint imports another endpoint's files", () => {
    const graph = importGraph(root);
    const endpointOf = (file: string) => /^endpoints\/([^/]+)\//.exec(relative(root, file))?.[1];
    const crossings: string[] = [];
    for (const [file, deps] of graph) {
      const own = endpointOf(file);
      if (own === undefined) continue;
      for (const dep of deps) {
        const other = endpointOf(dep);
        if (other !== undefined && other !== own)
          crossings.push(`${relative(root, file)} → ${relative(root, dep)}`);
      }
    }
    expect(new Set([...graph.keys()].map(endpointOf).filter(Boolean)).size).toBeGreaterThanOrEqual(5);
    expect(crossings).toEqual([]);
  });
});
