/**
 * How long the router (`router.ts`) waits before retrying a call on the same alias: exponential backoff with
 * jitter from {@link BASE_BACKOFF_MS}, never more than {@link MAX_BACKOFF_MS}, at least the upstream's
 * `retry-after`; an upstream asking for longer than that moves the call to the next fallback instead.
 */

/** Longest wait between two attempts, ms. */
export const MAX_BACKOFF_MS = 2000;
const BASE_BACKOFF_MS = 100;

/**
 * The wait before the `retry`-th retry (1 for the first), ms, or undefined when the upstream's `retry-after`
 * (seconds) asks for more than {@link MAX_BACKOFF_MS}.
 */
export function retryBackoffMs(retry: number, retryAfterSeconds: number | undefined): number | undefined {
  const backoff = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (retry - 1)) * (0.5 + Math.random() / 2);
  const wanted = (retryAfterSeconds ?? 0) * 1000;
  if (wanted > MAX_BACKOFF_MS) return undefined;
  return Math.max(backoff, wanted);
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}
