/**
 * Client connection timeouts (GATEWAY_REQUEST_TIMEOUT_MS, GATEWAY_HEADERS_TIMEOUT_MS,
 * GATEWAY_KEEP_ALIVE_TIMEOUT_MS): a client that trickles its body or its headers, or idles on a kept-alive
 * connection, is cut instead of holding the connection forever. Small timeouts here; the defaults are in README.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASTER_KEY, startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
let port: number;

beforeAll(async () => {
  gw = await startTestGateway("model_list: []\n", {
    GATEWAY_REQUEST_TIMEOUT_MS: "600",
    GATEWAY_HEADERS_TIMEOUT_MS: "400",
    GATEWAY_KEEP_ALIVE_TIMEOUT_MS: "300",
  });
  port = Number(new URL(gw.url).port);
});
afterAll(() => gw?.close());

/** Opens a connection and reports what the server sent and whether it closed the connection. */
function connect() {
  const socket = net.connect(port, "127.0.0.1");
  const state = { received: "", closed: false };
  socket.on("data", (chunk: Buffer) => {
    state.received += chunk.toString();
  });
  socket.on("close", () => {
    state.closed = true;
  });
  socket.on("error", () => undefined);
  return { socket, state, opened: new Promise((resolve) => socket.once("connect", resolve)) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `text` one character every `everyMs` until done or the server closes the connection. */
async function trickle(socket: net.Socket, state: { closed: boolean }, text: string, everyMs: number) {
  let sent = 0;
  while (sent < text.length && !state.closed) {
    socket.write(text[sent] ?? "");
    sent += 1;
    await sleep(everyMs);
  }
  return sent;
}

describe("client timeouts", () => {
  it("cuts a client that sends its body one byte at a time, with 408", async () => {
    const { socket, state, opened } = connect();
    await opened;
    const body = JSON.stringify({ model: "general", messages: [{ role: "user", content: "x".repeat(40) }] });
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${MASTER_KEY}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    const sent = await trickle(socket, state, body, 50);
    expect(sent).toBeLessThan(body.length);
    expect(state.received).toMatch(/^HTTP\/1\.1 408/);
    socket.destroy();
  }, 15_000);

  it("cuts a client that sends its headers one byte at a time", async () => {
    const { socket, state, opened } = connect();
    await opened;
    const headers = `GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${MASTER_KEY}\r\nx-pad: ${"p".repeat(80)}\r\n\r\n`;
    const sent = await trickle(socket, state, headers, 50);
    expect(sent).toBeLessThan(headers.length);
    expect(state.closed).toBe(true);
    socket.destroy();
  }, 15_000);

  it("closes a kept-alive connection left idle after its response", async () => {
    const { socket, state, opened } = connect();
    await opened;
    socket.write(`GET /health/liveliness HTTP/1.1\r\nhost: x\r\nconnection: keep-alive\r\n\r\n`);
    await expect.poll(() => state.received, { timeout: 2000 }).toMatch(/^HTTP\/1\.1 200/);
    await expect.poll(() => state.closed, { timeout: 5000 }).toBe(true);
    socket.destroy();
  });
});
