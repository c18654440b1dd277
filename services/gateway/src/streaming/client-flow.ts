/**
 * Flow control towards a stream's client: a relay reads the next piece of the upstream only once the client has
 * taken what was written for the last one. While the client's response needs draining (`res.write()` returned
 * false, Node's `writableNeedDrain`: its buffer passed the high-water mark, 16 KiB), the relay stops reading; undici's
 * body then fills its own small buffer and stops reading the upstream's socket, so an upstream streaming faster
 * than the client reads is held back by TCP instead of piling up in the gateway. A client that takes nothing for
 * `stream_client_idle_timeout` seconds ({@link ClientIdleTimeoutError}) has its stream ended: the relay returns
 * and the answer step aborts the upstream and books what was relayed.
 */
import type { ServerResponse } from "node:http";

/**
 * What the drain wait keeps a stream's client buffer under, bytes: 1 MiB. A write that takes the buffer past the
 * high-water mark (16 KiB), however large, sets `writableNeedDrain`, and the relay writes nothing more until the
 * buffer has drained, so the buffer holds at most the mark plus one piece: one upstream read (at most 64 KiB).
 * A buffer-mode output guard releasing a whole held answer at the end is the one larger write.
 */
export const MAX_HELD_BYTES = 1024 * 1024;

/** `general_settings.stream_client_idle_timeout` when the config does not set it: 60 s, in ms. */
export const DEFAULT_STREAM_CLIENT_IDLE_TIMEOUT_MS = 60_000;

/** The error `type` (metrics' `exception_class`, observers' `errorType`) of a stream ended for an idle client. */
export const CLIENT_IDLE_TIMEOUT_TYPE = "client_idle_timeout";

/** The client read nothing of a stream for {@link ClientIdleTimeoutError.timeoutMs}; the stream was ended. */
export class ClientIdleTimeoutError extends Error {
  override readonly name = "ClientIdleTimeoutError";

  /** @param timeoutMs the idle timeout that passed, ms. */
  constructor(readonly timeoutMs: number) {
    super(
      `The client read nothing of the stream for ${timeoutMs / 1000} s (stream_client_idle_timeout); it was ended.`,
    );
  }
}

/** Whether the relay must wait for `res` to drain before it reads the upstream's next piece. */
export function mustWait(res: ServerResponse): boolean {
  return res.writableNeedDrain;
}

/**
 * Waits until `res` has drained (its writable buffer is empty), no longer needs to ({@link mustWait}), or closed.
 * The client makes progress while that buffer shrinks; it is checked every quarter of `idleTimeoutMs`, so a
 * client that takes nothing is given up between 1 and 1.25 times `idleTimeoutMs` after its last progress.
 * @param idleTimeoutMs ms without progress before giving up (0 or less: wait without a limit).
 * @throws ClientIdleTimeoutError when the client took nothing for `idleTimeoutMs`.
 */
export function waitForClient(res: ServerResponse, idleTimeoutMs: number): Promise<void> {
  if (!mustWait(res) || res.destroyed) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let lowest = res.writableLength;
    let idleSince = performance.now();
    const checkEvery = Math.max(1, idleTimeoutMs / 4);
    const timer =
      idleTimeoutMs > 0
        ? setInterval(() => {
            const now = performance.now();
            if (!mustWait(res)) settle();
            else if (res.writableLength < lowest) {
              lowest = res.writableLength;
              idleSince = now;
            } else if (now - idleSince >= idleTimeoutMs) {
              done();
              reject(new ClientIdleTimeoutError(idleTimeoutMs));
            }
          }, checkEvery)
        : undefined;
    const settle = () => {
      done();
      resolve();
    };
    // Listeners are removed once the wait is over: a long stream waits thousands of times on one response.
    const done = () => {
      clearInterval(timer);
      res.off("drain", settle).off("close", settle);
    };
    res.on("drain", settle).on("close", settle);
  });
}

/**
 * Ends the stream of a client that stopped reading: its connection is closed at once (what it left unread is
 * dropped; an error event would never be read). Returns whether `error` was that ({@link ClientIdleTimeoutError}).
 */
export function endIdleClient(res: ServerResponse, error: unknown): boolean {
  if (!(error instanceof ClientIdleTimeoutError)) return false;
  res.destroy();
  return true;
}
