/**
 * The HTTP plumbing of small contract fakes (test/fixtures/presidio-analyzer.ts, scanner-service.ts): a server
 * on 127.0.0.1 at an ephemeral port that reads each request body whole and hands it to the fake, and a close
 * that also drops kept-alive connections (the gateway's HTTP client keeps them open).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the fake sees it. */
export interface FakeRequest {
  method: string;
  /** Path and query, e.g. /v1/scan. */
  url: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  json: unknown;
}

/** Writes the response: status, body text, content type (default application/json). */
export type Send = (status: number, body: string, contentType?: string) => void;

export interface FakeHttpService {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  close(): Promise<void>;
}

/** Starts a fake whose `handle` answers every request through `send`. */
export async function startFakeHttpService(
  handle: (req: FakeRequest, send: Send) => void,
): Promise<FakeHttpService> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        json = undefined;
      }
      handle(
        { method: req.method ?? "", url: req.url ?? "", json },
        (status, body, contentType = "application/json") => {
          res.writeHead(status, { "content-type": contentType });
          res.end(body);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
