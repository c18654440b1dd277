/** Request bodies as a client streams them: `transfer-encoding: chunked`, no `content-length`. */

/**
 * A `fetch` init whose body is `text` sent chunked, in pieces of `pieceBytes` (default 1 KiB). Node's fetch
 * needs `duplex: "half"` for a stream body.
 */
export function chunkedBody(text: string, pieceBytes = 1024): RequestInit {
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += pieceBytes) controller.enqueue(bytes.slice(i, i + pieceBytes));
      controller.close();
    },
  });
  return { body, duplex: "half" } as RequestInit;
}
