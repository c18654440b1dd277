/**
 * How the compact metrics (`compact-counter.ts`, `compact-gauge.ts`, `compact-histogram.ts`) read and check the
 * label arguments of a prom-client style call, as prom-client 15's own metrics do (their documented API:
 * `labels(...values)`, `remove(...values)` or one object of label values; the same errors), written here so that
 * nothing reaches into prom-client's private modules.
 */
import { inspect } from "node:util";
import type { Labels } from "./series-store.js";

/**
 * The labels of a call's arguments: the first argument when it is an object, else the values in the order of
 * `labelNames` (`labels("gpt-4o", "200")`).
 * @throws Error when values are given and their number is not that of the label names.
 */
export function labelsOfArgs(labelNames: readonly string[], args: readonly unknown[]): Labels {
  if (typeof args[0] === "object") return args[0] as Labels;
  if (labelNames.length !== args.length) {
    throw new Error(
      `Invalid number of arguments (${args.length}): "${args.join(", ")}" for label names ` +
        `(${labelNames.length}): "${labelNames.join(", ")}".`,
    );
  }
  const labels: Labels = {};
  for (let i = 0; i < labelNames.length; i++) labels[labelNames[i] as string] = args[i] as string | number;
  return labels;
}

/** @throws Error when `labels` names a label that is not one of `labelNames`. */
export function checkLabelNames(labelNames: readonly string[], labels: Labels): void {
  for (const name in labels) {
    if (!labelNames.includes(name)) {
      throw new Error(`Added label "${name}" is not included in initial labelset: ${inspect(labelNames)}`);
    }
  }
}
