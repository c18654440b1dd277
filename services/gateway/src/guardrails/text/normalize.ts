/**
 * The form of a text the detectors read: invisible characters removed (Unicode general category Cf, "format":
 * zero-width space, joiners, soft hyphen, word joiner, BOM, bidi controls, …, and the other
 * Default_Ignorable_Code_Point characters such as variation selectors and Hangul fillers), then Unicode NFKC
 * (fullwidth `＠` → `@`, `４` → `4`, ideographic space → space, ligatures split). A model reads `bob\u200b@corp.com`
 * and `bob＠corp．com` as an address; so must the PII recognizers and the injection scanner.
 *
 * Masking rewrites the text as the client sent it, so the normalised form keeps a map from its offsets back to
 * the original ones. Hot path: a text with only ASCII characters (most prompts), or one that normalisation
 * leaves unchanged, costs one regular-expression test (two native calls for the latter) and allocates nothing.
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

/** The slow path: cluster by cluster, with the offset map. */
function mapped(text: string): NormalizedText {
  let out = "";
  const starts: number[] = [];
  const ends: number[] = [];
  let cluster = "";
  let clusterStart = 0;
  let clusterEnd = 0;
  const flush = () => {
    if (cluster === "") return;
    const n = cluster.normalize("NFKC");
    for (let k = 0; k < n.length; k++) {
      starts.push(clusterStart);
      ends.push(clusterEnd);
    }
    out += n;
    cluster = "";
  };
  for (let i = 0; i < text.length; ) {
    const code = text.codePointAt(i) as number;
    const width = code > 0xffff ? 2 : 1;
    const ch = text.slice(i, i + width);
    if (INVISIBLE.test(ch)) {
      i += width;
      continue;
    }
    if (cluster === "" || !CONTINUES.test(ch)) {
      flush();
      clusterStart = i;
    }
    cluster += ch;
    i += width;
    clusterEnd = i;
  }
  flush();
  return { text: out, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
}

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
