/** Formatting of the benchmark's reports: Markdown tables and numbers with their units ("n/a" when not finite). */

/** Renders `rows` under `head` as a Markdown table (also readable on a terminal); cells are written as given. */
export function markdownTable(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** Milliseconds, three decimals: `1.234 ms`. */
export const ms = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(3)} ms` : "n/a");

/** Milliseconds with a sign: `+1.234 ms`, `-0.500 ms`. */
export const signedMs = (v: number): string =>
  Number.isFinite(v) ? `${v >= 0 ? "+" : ""}${v.toFixed(3)} ms` : "n/a";

/** A ratio as a percentage: 0.5 → `50.0 %`. */
export const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(1)} %` : "n/a");

/** KiB as MiB: `12.3 MiB`. */
export const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

/** CPU ms spread over `n` requests, as whole µs per request: `123 µs` ("n/a" when unknown or `n` is 0). */
export const usPer = (msUsed: number | undefined, n: number): string =>
  msUsed === undefined || !Number.isFinite(msUsed) || n === 0
    ? "n/a"
    : `${((msUsed * 1000) / n).toFixed(0)} µs`;

/** `1 KB`, `100 KB`, `1 MB` (decimal units, as the sizes are given). */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1e6) return `${+(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${+(bytes / 1e3).toFixed(1)} KB`;
  return `${bytes} B`;
}
