import { describe, expect, it } from "vitest";
import { abortSignalOf, CallAbort } from "../../../../services/gateway/src/router/call-abort.js";

describe("CallAbort", () => {
  it("aborts once: emits abort, keeps the first reason, and aborts its signal made before or after", () => {
    const abort = new CallAbort();
    const before = abort.signal;
    let emitted = 0;
    abort.on("abort", () => emitted++);
    const reason = new Error("client disconnected");
    abort.abort(reason);
    abort.abort(new Error("again"));
    expect([abort.aborted, abort.reason, emitted]).toEqual([true, reason, 1]);
    expect([before.aborted, before.reason]).toEqual([true, reason]);
    const after = new CallAbort();
    after.abort(reason);
    expect(abortSignalOf(after).reason).toBe(reason);
  });

  it("passes an AbortSignal through as it is", () => {
    const signal = new AbortController().signal;
    expect(abortSignalOf(signal)).toBe(signal);
  });
});
