/**
 * Posts OTLP/HTTP JSON request bodies to Langfuse's OTLP endpoint, `POST {host}/api/public/otel/v1/traces`,
 * with the headers Langfuse's JS SDK sends: basic auth `publicKey:secretKey`, `x-langfuse-ingestion-version: 4`
 * (real-time ingestion), `x-langfuse-sdk-name: javascript`, `x-langfuse-public-key` (Langfuse docs,
 * "OpenTelemetry" integration). One keep-alive connection pool; no retries here (the bounded queue retries).
 */
import http from "node:http";
import https from "node:https";
import type { TraceSettings } from "../config/trace-settings.js";
import type { SendBody } from "./bounded-exporter.js";

/** Raised for an export the receiver did not accept: its HTTP status, or 0 for a network error or timeout. */
export class ExportError extends Error {
  override name = "ExportError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * Creates the sender. Each call resolves on a 2xx answer and rejects with an {@link ExportError} on any other
 * status, a network error, or after `settings.exportTimeoutMs` ms without an answer.
 */
export function otlpHttpSender(
  settings: Pick<TraceSettings, "host" | "publicKey" | "secretKey" | "exportTimeoutMs">,
): SendBody {
  const url = new URL(`${settings.host}/api/public/otel/v1/traces`);
  const client = url.protocol === "https:" ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: 4 });
  const headers = {
    authorization: `Basic ${Buffer.from(`${settings.publicKey}:${settings.secretKey}`).toString("base64")}`,
    "content-type": "application/json",
    "x-langfuse-ingestion-version": "4",
    "x-langfuse-sdk-name": "javascript",
    "x-langfuse-public-key": settings.publicKey,
  };
  return (body) =>
    new Promise<void>((resolve, reject) => {
      const payload = Buffer.from(body, "utf8");
      const request = client.request(
        url,
        {
          method: "POST",
          agent,
          headers: { ...headers, "content-length": payload.length },
          timeout: settings.exportTimeoutMs,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          response.resume(); // the answer's body is not needed; drain it so the socket is reused
          response.on("end", () => {
            if (status >= 200 && status < 300) resolve();
            else reject(new ExportError(`trace receiver answered HTTP ${status}`, status));
          });
          response.on("error", (error) => reject(new ExportError(error.message, status)));
        },
      );
      request.on("timeout", () =>
        request.destroy(new ExportError(`no answer within ${settings.exportTimeoutMs} ms`, 0)),
      );
      request.on("error", (error) =>
        reject(error instanceof ExportError ? error : new ExportError(error.message, 0)),
      );
      request.end(payload);
    });
}
