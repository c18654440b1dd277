/**
 * The form of a text the detectors read: invisible characters removed (Unicode general category Cf, "format":
 * zero-width space, joiners, soft hyphen, word joiner, BOM, bidi controls, …, and the other
 * Default_Ignorable_Code_Point characters such as variation selectors and Hangul fillers), then Unicode NFKC
 * (fullwidth `＠` → `@`, `４` → `4`, ideographic space → space, ligatures split). A model reads `bob\u200b@corp.com`
 * and `bob＠corp．com` as an address; so must the PII recognizers and the injection scanner.
 *
 * Masking rewrites the text as the client sent it, so the normalised form keeps a map from its offsets back to
 * the original ones. Hot path: a text with only ASCII characters (most prompts), or one that normalisation
 * leaves unchanged, costs one regular-expression test (two more native calls for the latter) and no offset map.
 */

/** A text as the detectors read it, and how its offsets map back. */
export interface NormalizedText {
  /** The normalised text. */
  readonly text: string;
  /**
   * Only when `text` differs from the original: for each UTF-16 unit of `text`, the original [start, end) of
   * the cluster it came from (a character and the combining marks after it, invisible characters in between
   * dropped). Absent: offsets are the same in both.
   */
  readonly starts?: Int32Array;
  readonly ends?: Int32Array;
}

/** Characters whose removal or normalisation may change a text; a text without any is returned as it is. */
const NOT_ASCII = /[\u0080-\uffff]/;
/** Cf and the rest of Default_Ignorable_Code_Point (invisible in rendering, ignored by most tokenizers' users). */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
/** Characters that continue a cluster: combining marks, and Hangul jamo vowels and finals (NFKC composes them). */
const CONTINUES = /[\p{M}\u1160-\u11ff\ud7b0-\ud7ff]/u;

/**
 * The detectors' form of `text` (see the module comment). NFKC is applied per cluster (a character and the marks
 * that follow it), which equals NFKC of the whole text with the invisible characters removed.
 */
export function normalizeForDetection(text: string): NormalizedText {
  if (!NOT_ASCII.test(text)) return { text };
  if (!INVISIBLE.test(text)) {
    const nfkc = text.normalize("NFKC");
    if (nfkc === text) return { text };
  }
  return mapped(text);
}

/**
 * The slow path: cluster by cluster, with the offset map. ASCII characters are never invisible, never continue a
 * cluster and are their own NFKC form: a run of them is copied at once (its last character may still take the
 * marks after it, so it opens a cluster).
 */
function mapped(text: string): NormalizedText {
  const map = new OffsetMap(text.length);
  let out = "";
  let clusterStart = -1;
  let clusterEnd = 0;
  const flush = () => {
    if (clusterStart < 0) return;
    const raw = text.slice(clusterStart, clusterEnd);
    const n = raw.length === 1 && raw.charCodeAt(0) < 0x80 ? raw : removeInvisible(raw).normalize("NFKC");
    map.add(n.length, clusterStart, clusterEnd);
    out += n;
    clusterStart = -1;
  };
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      flush();
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) < 0x80) j++;
      if (j - 1 > i) {
        out += text.slice(i, j - 1);
        map.addRun(i, j - 1);
      }
      clusterStart = j - 1;
      clusterEnd = j;
      i = j;
      continue;
    }
    const width = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1;
    const ch = width === 1 ? (text[i] as string) : text.slice(i, i + 2);
    if (INVISIBLE.test(ch)) {
      i += width;
      continue;
    }
    if (clusterStart < 0 || !CONTINUES.test(ch)) {
      flush();
      clusterStart = i;
    }
    i += width;
    clusterEnd = i;
  }
  flush();
  return { text: out, starts: map.starts.subarray(0, map.length), ends: map.ends.subarray(0, map.length) };
}

/** Growable pair of offset arrays (one entry per UTF-16 unit of the normalised text). */
class OffsetMap {
  starts: Int32Array;
  ends: Int32Array;
  length = 0;

  constructor(capacity: number) {
    this.starts = new Int32Array(capacity + 8);
    this.ends = new Int32Array(capacity + 8);
  }

  /** `count` units that came from the original [start, end). */
  add(count: number, start: number, end: number): void {
    this.reserve(count);
    this.starts.fill(start, this.length, this.length + count);
    this.ends.fill(end, this.length, this.length + count);
    this.length += count;
  }

  /** One unit per original unit of [from, to) (copied characters). */
  addRun(from: number, to: number): void {
    this.reserve(to - from);
    for (let k = from; k < to; k++) {
      this.starts[this.length] = k;
      this.ends[this.length++] = k + 1;
    }
  }

  private reserve(count: number): void {
    if (this.length + count <= this.starts.length) return;
    const size = Math.max(this.starts.length * 2, this.length + count);
    const grow = (a: Int32Array) => {
      const b = new Int32Array(size);
      b.set(a.subarray(0, this.length));
      return b;
    };
    this.starts = grow(this.starts);
    this.ends = grow(this.ends);
  }
}

const INVISIBLE_ALL = new RegExp(INVISIBLE.source, "gu");
/** A cluster without the invisible characters inside it (a mark may follow one: `e\u200b\u0301`). */
const removeInvisible = (raw: string): string => (INVISIBLE.test(raw) ? raw.replace(INVISIBLE_ALL, "") : raw);

/**
 * The original [start, end) of the normalised span [start, end) (end exclusive, UTF-16 offsets). A span that
 * covers part of a cluster's normalised form covers the whole cluster; invisible characters inside the span are
 * inside the result, those at its edges are not.
 */
export function originalSpan(normalized: NormalizedText, start: number, end: number): [number, number] {
  const { starts, ends } = normalized;
  if (starts === undefined || ends === undefined) return [start, end];
  if (end <= start) {
    const at = start < starts.length ? (starts[start] as number) : lastEnd(ends);
    return [at, at];
  }
  return [starts[start] ?? lastEnd(ends), ends[Math.min(end, ends.length) - 1] ?? lastEnd(ends)];
}

const lastEnd = (ends: Int32Array): number => (ends.length === 0 ? 0 : (ends[ends.length - 1] as number));
