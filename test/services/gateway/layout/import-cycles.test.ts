/**
 * The gateway's source has no import circle (type-only imports included): a module's dependencies never lead
 * back to it (the graph and the circle finder: test/helpers/import-graph.ts). Its top-level folders form layers
 * too: seen folder by folder the imports have no circle, but for the few upward imports listed (and justified)
 * in UPWARD below.
 */
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circles, importGraph } from "../../../helpers/import-graph.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../services/gateway/src");

/**
 * The imports that run up the folders' layers, each `<file> → <file>` with why it stays. At most five: a shared
 * type or value belongs at the level of its lowest user.
 */
const UPWARD: Record<string, string> = {
  "cache/types.ts → keys/records.ts":
    "an invalidation message carries the key's new state (type only), so instances that cannot reach Postgres apply it",
  "cache/types.ts → users/records.ts": "as above, a user's new limits (type only)",
  "cache/types.ts → teams/records.ts": "as above, a team's or a membership's new state (type only)",
  "config/model-list.ts → providers/index.ts":
    "a deployment is built from its provider's facts (default api_base, key variable) when the config is loaded",
  "config/model-list.ts → cost/pricing.ts": "the loader warns at start-up about a deployment without a price",
};

const folderOf = (file: string) => {
  const path = relative(root, file);
  return path.includes("/") ? (path.split("/")[0] as string) : "(root)";
};

/** The folder-level graph of `graph`, leaving out the imports named in `except`. */
function folderGraph(graph: Map<string, string[]>, except: ReadonlySet<string>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    const from = folderOf(file);
    const targets = folders.get(from) ?? folders.set(from, new Set()).get(from)!;
    for (const dep of deps) {
      const to = folderOf(dep);
      if (
        to === from ||
        !dep.startsWith(root) ||
        except.has(`${relative(root, file)} → ${relative(root, dep)}`)
      )
        continue;
      targets.add(to);
    }
  }
  return new Map([...folders].map(([folder, targets]) => [folder, [...targets]]));
}

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

  it("layers its folders: no folder-level circle but for the listed upward imports (at most five)", () => {
    const graph = importGraph(root);
    expect(Object.keys(UPWARD).length).toBeLessThanOrEqual(5);
    const imports = new Set(
      [...graph].flatMap(([file, deps]) => deps.map((d) => `${relative(root, file)} → ${relative(root, d)}`)),
    );
    // Every listed exception still exists (a fixed one is taken off the list).
    expect(Object.keys(UPWARD).filter((edge) => !imports.has(edge))).toEqual([]);
    const folders = folderGraph(graph, new Set(Object.keys(UPWARD)));
    expect(folders.size).toBeGreaterThan(20);
    // A circle names the folders that import each other; move what they share down to its lowest user.
    expect(circles(folders).map((c) => c.sort())).toEqual([]);
  });

  it("detects a folder-level circle: one upward import more closes one", () => {
    const graph = importGraph(root);
    const folders = folderGraph(graph, new Set(Object.keys(UPWARD).slice(1)));
    expect(circles(folders).length).toBeGreaterThan(0);
  });
});
