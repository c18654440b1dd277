/**
 * The console's pino logger. Cookies, authorization headers and CSRF tokens carry sessions and keys: they are
 * redacted from every line. Request bodies (where a generated key travels) are never logged.
 */
import pino, { type DestinationStream, type Logger } from "pino";

/** Paths removed from every log line. */
export const REDACTED_PATHS = [
  "req.headers.cookie",
  "req.headers.authorization",
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
];

/** A logger at `level` writing JSON lines to `destination` (default stdout). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: { service: "console" }, redact: REDACTED_PATHS }, destination);
}
