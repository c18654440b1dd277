/**
 * Test helper: expects a compact metric and a plain prom-client metric given the same calls to read the same, to
 * the byte: the registries' text, the metrics' `get()`, the registries' JSON, and that JSON aggregated over two
 * workers as the cluster's primary does.
 */
import { AggregatorRegistry, type Registry } from "prom-client";
import { expect } from "vitest";

/** A metric and the registry holding only it. */
export interface Twins {
  plain: { get(): Promise<unknown> };
  compact: { get(): Promise<unknown> };
  plainRegistry: Registry;
  compactRegistry: Registry;
}

/** Expects every read of the two metrics and registries to be the same. */
export async function expectSameReads(t: Twins): Promise<void> {
  expect(await t.compactRegistry.metrics()).toBe(await t.plainRegistry.metrics());
  expect(JSON.stringify(await t.compact.get())).toBe(JSON.stringify(await t.plain.get()));
  const compactJson = await t.compactRegistry.getMetricsAsJSON();
  const plainJson = await t.plainRegistry.getMetricsAsJSON();
  expect(JSON.stringify(compactJson)).toBe(JSON.stringify(plainJson));
  // As the cluster's primary does: the workers' JSON, through IPC (so serialized), aggregated.
  const overIpc = (json: unknown) => JSON.parse(JSON.stringify(json));
  const aggregate = async (registry: Registry, json: unknown) =>
    AggregatorRegistry.aggregate([overIpc(json), overIpc(await registry.getMetricsAsJSON())]).metrics();
  expect(await aggregate(t.compactRegistry, compactJson)).toBe(await aggregate(t.plainRegistry, plainJson));
}
