/**
 * Compact storage of a metric's series, for the metrics with one series per virtual key
 * (`compact-histogram.ts`, `compact-counter.ts`): a {@link LabelIndex} gives each label set a slot number (one
 * index can serve several metrics with the same label names, so they share its keys), and a {@link SeriesStore}
 * keeps a metric's numbers per slot in one shared `Float64Array`, which slots hold a series, and in which order
 * prom-client would list them. Instead of prom-client's object per series (and, for a histogram, its bucket
 * dictionary).
 *
 * Memory: slots are never freed (a removed or reset series leaves its slot empty; the same label set reuses it);
 * label values are bounded (see `metrics.ts`), so is this.
 */

/** Label values by label name, as prom-client takes them. */
export type Labels = Record<string, string | number>;

const INITIAL_SLOTS = 16;

/**
 * prom-client's key of a label set (`hashObject` of its `lib/util.js`: the same text, so the same label sets share
 * a series), built in one piece: a flat string, not the tree of cons strings `+=` builds, which a Map would keep
 * (see {@link seriesKey}).
 */
export function labelKey(labels: Labels, sortedLabelNames: readonly string[]): string {
  const parts: string[] = [];
  for (const name of sortedLabelNames) {
    const value = labels[name];
    if (value !== undefined) parts.push(`${name}:${value},`);
  }
  return parts.join("");
}

/**
 * A key naming a label set without ambiguity: each value is prefixed by its length, so no value can run into
 * the next whatever characters it holds. Built in one piece (a flat string): a key built by `+=` is a tree of
 * V8 cons strings, which a Map keeps as is, about 3.5 times the memory (782 against 212 bytes per entry with a
 * key hash among four labels, measured on node 20), and slower to look up.
 */
export function seriesKey(values: readonly string[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string;
    parts[i] = `${value.length}:${value}|`;
  }
  return parts.join("");
}

/** Slot numbers of label sets (0, 1, … in order of first use), for metrics with the same label names. */
export class LabelIndex {
  readonly sortedLabelNames: readonly string[];
  private readonly slots = new Map<string, number>();
  /** The labels each slot was made with. */
  private readonly labels: Labels[] = [];

  constructor(labelNames: readonly string[]) {
    this.sortedLabelNames = [...labelNames].sort();
  }

  /** Label sets that have a slot. */
  get size(): number {
    return this.labels.length;
  }

  /** The slot of `labels`, made if new (with `labels`, kept as given). */
  slotOf(labels: Labels): number {
    const key = labelKey(labels, this.sortedLabelNames);
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.labels.length;
      this.slots.set(key, slot);
      this.labels.push(labels);
    }
    return slot;
  }

  /** The slot of `labels`, or undefined when it has none. */
  find(labels: Labels): number | undefined {
    return this.slots.get(labelKey(labels, this.sortedLabelNames));
  }

  /** The labels `slot` was made with. */
  labelsOf(slot: number): Labels {
    return this.labels[slot] as Labels;
  }
}

/** One metric's numbers per slot (`stride` each) and which slots hold a series. */
export class SeriesStore {
  /** Per slot `stride` numbers; a slot's numbers start at `slot * stride`. */
  data: Float64Array;
  /** Slots holding a series, in the order prom-client would list them (first write first). */
  order: number[] = [];
  /** The labels of each slot's series (those prom-client would report). */
  readonly labels: Labels[] = [];
  /** 1 when the slot holds a series. */
  private live: Uint8Array;

  constructor(readonly stride: number) {
    this.data = new Float64Array(INITIAL_SLOTS * stride);
    this.live = new Uint8Array(INITIAL_SLOTS);
  }

  /** Bytes of the typed arrays (capacity included). */
  get storedBytes(): number {
    return this.data.byteLength + this.live.byteLength;
  }

  isLive(slot: number): boolean {
    return this.live[slot] === 1;
  }

  /** Gives `slot` a new series with `labels` and zeros, at the end of the order if it held none. */
  revive(slot: number, labels: Labels): void {
    if (slot >= this.live.length) this.grow(slot + 1);
    this.data.fill(0, slot * this.stride, (slot + 1) * this.stride);
    this.labels[slot] = labels;
    if (this.live[slot] === 1) return;
    this.live[slot] = 1;
    this.order.push(slot);
  }

  /** Drops the series of `slot`, if any. */
  remove(slot: number): void {
    if (this.live[slot] !== 1) return;
    this.live[slot] = 0;
    this.order.splice(this.order.indexOf(slot), 1);
  }

  /** Drops every series. */
  reset(): void {
    this.live.fill(0);
    this.order = [];
  }

  private grow(slots: number): void {
    let capacity = this.live.length * 2;
    while (capacity < slots) capacity *= 2;
    const data = new Float64Array(capacity * this.stride);
    data.set(this.data);
    const live = new Uint8Array(capacity);
    live.set(this.live);
    this.data = data;
    this.live = live;
  }
}
