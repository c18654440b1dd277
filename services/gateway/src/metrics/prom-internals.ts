/**
 * Helpers of prom-client 15 that the compact metrics (`compact-histogram.ts`, `compact-counter.ts`) call so that
 * they validate labels and read label arguments exactly as prom-client's own metrics do (`lib/util.js`,
 * `lib/validation.js`; not in its typings).
 */
import { createRequire } from "node:module";
import type { Labels } from "./series-store.js";

const promRequire = createRequire(import.meta.url);

/**
 * The labels of a metric call's arguments: the object when the first is one, else the values in label order.
 * @throws Error when values are given and their number is not that of the labels.
 */
export const { getLabels } = promRequire("prom-client/lib/util.js") as {
  getLabels: (labelNames: readonly string[], args: unknown[]) => Labels;
};

/** @throws Error when `labels` names a label not in `labelNames` (prom-client's message). */
export const { validateLabel } = promRequire("prom-client/lib/validation.js") as {
  validateLabel: (labelNames: readonly string[], labels: Labels) => void;
};
