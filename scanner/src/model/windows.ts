/**
 * Splits a token sequence into overlapping windows that together cover all of it, so a long text is
 * classified whole instead of being cut at the model's context length.
 */

/** One window: token ids `[start, end)` of the content sequence. */
export interface TokenWindow {
  start: number;
  end: number;
}

/**
 * Window boundaries over `length` content tokens.
 * @param length number of content tokens (special tokens excluded)
 * @param size content tokens per window (positive)
 * @param overlap tokens shared by consecutive windows (0 <= overlap < size)
 * @returns at least one window (an empty text gives one empty window); the last ends at `length`
 * @throws RangeError when size or overlap are out of range
 */
export function tokenWindows(length: number, size: number, overlap: number): TokenWindow[] {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`window size must be a positive integer, got ${size}`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size) {
    throw new RangeError(`window overlap must be an integer in [0, ${size}), got ${overlap}`);
  }
  const stride = size - overlap;
  const windows: TokenWindow[] = [];
  for (let start = 0; ; start += stride) {
    const end = Math.min(start + size, length);
    windows.push({ start, end });
    if (end >= length) return windows;
  }
}
