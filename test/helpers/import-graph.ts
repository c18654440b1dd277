/**
 * A TypeScript source tree's import graph and its circles, for layout tests. Imports are read from each file's
 * `import … from "…"` / `export … from "…"` statements (type-only imports included; relative specifiers only,
 * `.js` resolving to the `.ts` file), and circles found as strongly connected components (Tarjan).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** Every `.ts` file under `dir` (not `.d.ts`), absolute paths. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const SPECIFIER = /^\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"/gm;

/** Each source file under `dir` → the files it imports (relative imports only), absolute paths. */
export function importGraph(dir: string): Map<string, string[]> {
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

/**
 * The strongly connected components of `graph` with more than one module (or a module importing itself): each
 * one an import circle. Edges to nodes outside the graph are ignored.
 */
export function circles(graph: Map<string, string[]>): string[][] {
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
