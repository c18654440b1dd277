/** Observers' response headers (e.g. `x-trace-id`), added to every answer once the call is parsed. */
import type { CallContext, CallObserver } from "./types.js";

/** Every observer's response headers for `call`. */
export function observerHeaders(
  observers: readonly CallObserver[],
  call: CallContext,
): Record<string, string> {
  let headers: Record<string, string> = {};
  for (const observer of observers) {
    if (observer.responseHeaders) headers = { ...headers, ...observer.responseHeaders(call) };
  }
  return headers;
}
