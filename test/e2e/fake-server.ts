/**
 * One contract fake in its own process, for `npm run e2e`; `E2E_FAKE` names it:
 * - `langfuse`: test/fixtures/langfuse.ts (OTLP JSON ingestion, `GET /api/public/v2/observations?traceId=`),
 *   accepting the basic-auth pair `E2E_TRACE_PUBLIC_KEY` / `E2E_TRACE_SECRET_KEY` (both required);
 * - `presidio`: test/fixtures/presidio-analyzer.ts (`/analyze`, `/anonymize`, `/health`), recognizing
 *   {@link E2E_PII}.
 * Prints one JSON line `{"ready":true,"url":"http://127.0.0.1:<port>"}` on stdout when listening; exits on
 * SIGTERM/SIGINT. A missing or unknown `E2E_FAKE`, or missing keys, exit 2 with a message.
 */
import { startFakeLangfuse } from "../fixtures/langfuse.js";
import { type FakeEntity, startFakePresidio } from "../fixtures/presidio-analyzer.js";

/** What the Presidio fake reports wherever it occurs in a text. */
export const E2E_PII: readonly FakeEntity[] = [
  { entity_type: "EMAIL_ADDRESS", value: "jane.doe@example.com", score: 1 },
  { entity_type: "PERSON", value: "Jane Doe", score: 0.85 },
];

function refuse(message: string): never {
  process.stderr.write(`fake-server: ${message}\n`);
  process.exit(2);
}

async function start(name: string | undefined): Promise<{ url: string; close(): Promise<void> }> {
  if (name === "presidio") return startFakePresidio(E2E_PII);
  if (name === "langfuse") {
    const publicKey = process.env.E2E_TRACE_PUBLIC_KEY;
    const secretKey = process.env.E2E_TRACE_SECRET_KEY;
    if (!publicKey || !secretKey) refuse("E2E_TRACE_PUBLIC_KEY and E2E_TRACE_SECRET_KEY are required");
    return startFakeLangfuse({ publicKey, secretKey });
  }
  refuse(`E2E_FAKE must be langfuse or presidio, got ${name ?? "nothing"}`);
}

const fake = await start(process.env.E2E_FAKE);
process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url })}\n`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void fake.close().then(() => process.exit(0));
  });
}
