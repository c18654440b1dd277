/**
 * Batches what a relay writes for one piece read from the upstream into one `res.write`: a relay writes each
 * event as it is parsed, and a piece of the upstream's body often carries several. When what the relay wrote for
 * a piece is exactly the piece's text (every event relayed unchanged in the same wire format), the upstream's own
 * bytes are written instead, so the text is not encoded again.
 */
import type { ServerResponse } from "node:http";

/** See the module comment. Outside a piece ({@link PieceWriter.hold} … {@link PieceWriter.release}) it writes at once. */
export class PieceWriter {
  private held = "";
  private holding = false;

  constructor(private readonly res: ServerResponse) {}

  /** Writes `text` (SSE wire text), or keeps it for {@link PieceWriter.release} while a piece is read. "" writes nothing. */
  write(text: string): void {
    if (this.holding) this.held += text;
    else if (text !== "") this.res.write(text);
  }

  /** Starts keeping writes until {@link PieceWriter.release}. */
  hold(): void {
    this.holding = true;
  }

  /**
   * Writes what was kept since {@link PieceWriter.hold} in one write and stops keeping. `raw` is the piece as
   * read and `rawText` its decoded text, given only when the two are the same bytes (no character split at
   * either end): when the kept text equals `rawText`, `raw` is written instead.
   */
  release(raw?: Buffer, rawText?: string): void {
    this.holding = false;
    const text = this.held;
    if (text === "") return;
    this.held = "";
    this.res.write(raw !== undefined && text === rawText ? raw : text);
  }
}
