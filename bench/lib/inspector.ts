/**
 * A minimal Chrome DevTools protocol client for a benchmarked gateway's inspector (`--inspect`), used to take
 * CPU profiles (`Profiler.start` / `Profiler.stop`) over chosen spans of a run.
 */
/** The minimal WebSocket this script uses (Node 20's global one, behind --experimental-websocket). */
interface Socket {
  onopen: (() => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: string }) => void) | null;
  send(data: string): void;
}

/**
 * A Chrome DevTools protocol client on the inspector listening on `port` (a process started with
 * `--inspect=127.0.0.1:<port>`): `cdp(method, params)` resolves with the method's result.
 * @throws when this process has no global WebSocket (Node 20: run with NODE_OPTIONS=--experimental-websocket),
 *   or the inspector is unreachable; a call rejects with the protocol's error message.
 */
export async function inspector(
  port: number,
): Promise<(method: string, params?: object) => Promise<unknown>> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const WebSocketClass = (globalThis as { WebSocket?: new (url: string) => Socket }).WebSocket;
  if (WebSocketClass === undefined) throw new Error("--profile needs NODE_OPTIONS=--experimental-websocket");
  const socket = new WebSocketClass(targets[0]!.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const pending = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id !== undefined) pending.get(message.id)?.(message);
    if (message.id !== undefined) pending.delete(message.id);
  };
  let next = 0;
  return (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result)));
      socket.send(JSON.stringify({ id, method, params }));
    });
}
