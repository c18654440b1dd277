/**
 * The benchmark's own code (bench/ and bench/lib/) has no import circle, type-only imports included: the
 * measurement modules write bench/lib/results.ts's types and the report modules read them, never each other.
 */
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { circles, importGraph } from "../helpers/import-graph.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../bench");

describe("bench layout", () => {
  it("has no import circle in bench/", () => {
    const graph = importGraph(root);
    expect(graph.has(resolve(root, "lib/results.ts"))).toBe(true);
    expect(graph.size).toBeGreaterThan(20);
    const found = circles(graph).map((c) => c.map((f) => relative(root, f)).sort());
    expect(found).toEqual([]);
  });

  it("the report modules import no measurement module", () => {
    const graph = importGraph(root);
    const reports = ["report.ts", "report-sections.ts", "scaling-report.ts", "notes.ts"];
    const measuring = ["rounds.ts", "scaling.ts", "load.ts", "cpu.ts", "many-keys.ts"].map((f) =>
      resolve(root, "lib", f),
    );
    const crossings = reports.flatMap((r) =>
      (graph.get(resolve(root, "lib", r)) ?? [])
        .filter((dep) => measuring.includes(dep))
        .map((dep) => `${r} → ${relative(root, dep)}`),
    );
    expect(crossings).toEqual([]);
  });
});
