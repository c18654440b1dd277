/**
 * A call's "the client went away" switch, made for the hot path: undici takes an EventEmitter as a request's
 * `signal` as well as an AbortSignal, and a listener on an emitter costs a fraction of a microsecond, where
 * adding and removing one on an AbortSignal (undici does both on every request) costs several. A real
 * AbortSignal ({@link CallAbort.signal}) is made only when something asks for it (a retry's backoff, the wait for
 * a stream's first chunk), and is aborted with the switch.
 */
import { EventEmitter } from "node:events";

/** Aborted at most once; emits `abort` then (undici's EventEmitter signal contract: `aborted`, `reason`). */
export class CallAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;

  /** Aborts with `reason` (the first call wins): `aborted`/`reason` set, `signal` aborted, `abort` emitted. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.emit("abort");
  }

  /** An AbortSignal that aborts with this (made on first use). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }
}

/** What {@link Router.send} accepts to abort a call: an AbortSignal or a {@link CallAbort}. */
export type AbortSource = AbortSignal | CallAbort;

/** `source` as an AbortSignal (a CallAbort's is made then). */
export const abortSignalOf = (source: AbortSource): AbortSignal =>
  source instanceof CallAbort ? source.signal : source;
