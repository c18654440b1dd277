/**
 * The gateway's source has no import circle (type-only imports included): a module's dependencies never lead
 * back to it. Imports are read from each file's `import … from "…"` / `export … from "…"` statements (relative
 * specifiers, `.js` resolving to the `.ts` file), and circles found as strongly connected components (Tarjan).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../services/gateway/src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const SPECIFIER = /^\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gm;

/** Each source file → the source files it imports (relative imports only). */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(dir)) {
    const text = readFileSync(file, "utf8");
    const deps = [...text.matchAll(SPECIFIER)].map((m) =>
      resolve(dirname(file), (m[1] as string).replace(/\.js$/, ".ts")),
    );
    graph.set(file, deps);
  }
  return graph;
}

/** The strongly connected components with more than one module (or a module importing itself). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
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
});
