/**
 * The Langfuse contract fake (test/fixtures/langfuse.ts) in its own process, for `npm run e2e`: OTLP JSON
 * ingestion and `GET /api/public/v2/observations?traceId=`. Env: `E2E_TRACE_PUBLIC_KEY`, `E2E_TRACE_SECRET_KEY`
 * (the basic-auth pair it accepts; required). Prints one JSON line `{"ready":true,"url":"http://127.0.0.1:<port>"}`
 * on stdout when listening; exits on SIGTERM/SIGINT.
 */
import { startFakeLangfuse } from "../fixtures/langfuse.js";

const publicKey = process.env.E2E_TRACE_PUBLIC_KEY;
const secretKey = process.env.E2E_TRACE_SECRET_KEY;
if (!publicKey || !secretKey) {
  process.stderr.write("langfuse fake: E2E_TRACE_PUBLIC_KEY and E2E_TRACE_SECRET_KEY are required\n");
  process.exit(2);
}
const langfuse = await startFakeLangfuse({ publicKey, secretKey });
process.stdout.write(`${JSON.stringify({ ready: true, url: langfuse.url })}\n`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void langfuse.close().then(() => process.exit(0));
  });
}
