/**
 * The series of a compact counter or gauge (`compact-counter.ts`, `compact-gauge.ts`): one number per label set
 * in a {@link SeriesStore}, slots from a {@link LabelIndex} that metrics with the same label names may share, and
 * what prom-client's `Counter`/`Gauge` do with them that both share: values as `get()` lists them (`{value,
 * labels}` in prom-client's order), `remove`, `reset`.
 */
import { checkLabelNames, labelsOfArgs } from "./label-args.js";
import { LabelIndex, type Labels, SeriesStore } from "./series-store.js";

/** One number per label set of one metric; see the module comment. */
export class ScalarSeries {
  readonly index: LabelIndex;
  private readonly store = new SeriesStore(1);

  /**
   * @param index shared with metrics of the same label names; a new one when absent.
   * @throws Error when `index` serves other label names.
   */
  constructor(
    name: string,
    private readonly labelNames: readonly string[],
    index: LabelIndex | undefined,
  ) {
    this.index = index ?? new LabelIndex(labelNames);
    if (this.index.sortedLabelNames.join() !== [...labelNames].sort().join()) {
      throw new Error(`${name}: its label index serves other label names`);
    }
    this.reset();
  }

  /** The slot of `labels` (validated), for {@link add} and {@link set}. @throws Error on an unknown label. */
  slotOf(labels: Labels): number {
    checkLabelNames(this.labelNames, labels);
    return this.index.slotOf(labels);
  }

  /** Adds `delta` to the series of `slot`; a new one starts at `delta`, with `labels`. */
  add(slot: number, labels: Labels, delta: number): void {
    const { store } = this;
    if (store.isLive(slot)) store.data[slot] = (store.data[slot] as number) + delta;
    else {
      store.revive(slot, labels);
      store.data[slot] = delta;
    }
  }

  /** Sets the series of `slot` to `value`, its labels to `labels` (as a prom-client gauge's `set`). */
  set(slot: number, labels: Labels, value: number): void {
    this.store.revive(slot, labels);
    this.store.data[slot] = value;
  }

  /**
   * Sets the series of `slot` to `value`; a new one gets the labels the slot was made with. Same as {@link set}
   * with those labels, without rewriting a live series' labels (the per-call path).
   */
  setSlot(slot: number, value: number): void {
    const { store } = this;
    if (!store.isLive(slot)) store.revive(slot, this.index.labelsOf(slot));
    store.data[slot] = value;
  }

  /** The value of the series of `labels`, 0 when there is none. */
  valueOf(labels: Labels): number {
    const slot = this.index.find(labels);
    return slot !== undefined && this.store.isLive(slot) ? (this.store.data[slot] as number) : 0;
  }

  /** The series as prom-client's `get()` lists them. */
  values(): { value: number; labels: Labels }[] {
    const { data, order, labels } = this.store;
    return order.map((slot) => ({ value: data[slot] as number, labels: labels[slot] as Labels }));
  }

  /** prom-client's `remove(...args)`. @throws Error on an unknown label or a wrong number of values. */
  remove(args: unknown[]): void {
    const labels = labelsOfArgs(this.labelNames, args);
    checkLabelNames(this.labelNames, labels);
    const slot = this.index.find(labels);
    if (slot !== undefined) this.store.remove(slot);
  }

  /** prom-client's `reset()`: no series, or one at 0 for a metric without labels. */
  reset(): void {
    this.store.reset();
    if (this.labelNames.length === 0) this.set(this.index.slotOf({}), {}, 0);
  }

  /** Slots' typed arrays, bytes. */
  get storedBytes(): number {
    return this.store.storedBytes;
  }
}
