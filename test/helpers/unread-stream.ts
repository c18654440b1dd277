/**
 * A raw HTTP/1.1 client that sends one POST and then does not read the answer (its socket is paused): the
 * client that leaves a stream unread. Node's `fetch` reads ahead into its own buffers, so it cannot be that
 * client. The socket can read a little at a time ({@link UnreadStream.sip}) or go on not reading.
 */
import net from "node:net";

export interface UnreadStream {
  socket: net.Socket;
  /** Resolves when the connection is closed (by the server, e.g. when it gave the client up). */
  closed: Promise<void>;
  /** Reads what has arrived for `ms` (the socket flowing), then stops reading again; resolves with the bytes read. */
  sip(ms: number): Promise<number>;
}

/**
 * Opens a connection to `origin` (e.g. `http://127.0.0.1:4321`), sends `POST path` with `headers` and the JSON
 * `body` (content-length set), and reads nothing of the answer.
 */
export async function openUnreadStream(
  origin: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<UnreadStream> {
  const { hostname, port } = new URL(origin);
  const socket = net.connect(Number(port), hostname);
  socket.pause();
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {}); // a reset by the server is what some tests wait for
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const text = JSON.stringify(body);
  const head = Object.entries({
    host: `${hostname}:${port}`,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${text}`);
  const sip = async (ms: number) => {
    let bytes = 0;
    const count = (data: Buffer) => {
      bytes += data.length;
    };
    socket.on("data", count);
    socket.resume();
    await new Promise((resolve) => setTimeout(resolve, ms));
    socket.pause();
    socket.off("data", count);
    return bytes;
  };
  return { socket, closed, sip };
}
