/**
 * Holds the classifier once it is loaded. The app starts answering (health 503) before the model is
 * downloaded and loaded; the slot is what /health and /v1/scan look at.
 */
import type { ScannerMetrics } from "../metrics/metrics.js";
import type { Classifier } from "./classifier.js";

/** `loading` until {@link ModelSlot.ready}, `failed` after {@link ModelSlot.fail}. */
export type ModelState = "loading" | "ready" | "failed";

/** The scanner's model, loaded or not yet. */
export class ModelSlot {
  #classifier: Classifier | undefined;
  #state: ModelState = "loading";
  #error: string | undefined;

  constructor(
    /** Model id, shown by /health while loading. */
    readonly model: string,
    private readonly metrics?: ScannerMetrics,
  ) {
    metrics?.modelLoaded.set(0);
  }

  get state(): ModelState {
    return this.#state;
  }

  /** Why loading failed (operator-facing; never contains a token). */
  get error(): string | undefined {
    return this.#error;
  }

  /** The classifier, or undefined while loading or after a failure. */
  get classifier(): Classifier | undefined {
    return this.#classifier;
  }

  ready(classifier: Classifier): void {
    this.#classifier = classifier;
    this.#state = "ready";
    this.metrics?.modelLoaded.set(1);
  }

  fail(message: string): void {
    this.#state = "failed";
    this.#error = message;
    this.metrics?.modelLoaded.set(0);
  }
}
