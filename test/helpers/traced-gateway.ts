/**
 * A gateway in process that traces into the Langfuse contract fake (`fixtures/langfuse.ts`), for the suites that
 * read the traces of real calls. {@link langfuseEnv} is the environment alone, for suites that start their
 * gateway another way.
 */
import { type FakeLangfuse, startFakeLangfuse } from "../fixtures/langfuse.js";
import { startTestGateway, type TestGateway } from "./gateway.js";

/**
 * The gateway's tracing variables pointing at `langfuse` (its URL and key pair); `flushIntervalMs` sets
 * `TRACE_FLUSH_INTERVAL_MS` (the gateway's default when absent).
 */
export function langfuseEnv(langfuse: FakeLangfuse, flushIntervalMs?: number): Record<string, string> {
  return {
    TRACE_HOST: langfuse.url,
    TRACE_PUBLIC_KEY: langfuse.publicKey,
    TRACE_SECRET_KEY: langfuse.secretKey,
    ...(flushIntervalMs === undefined ? {} : { TRACE_FLUSH_INTERVAL_MS: String(flushIntervalMs) }),
  };
}

/** A started traced gateway and its Langfuse fake; `close` stops both (the gateway first, flushing its traces). */
export interface TracedGateway {
  gw: TestGateway;
  langfuse: FakeLangfuse;
  close(): Promise<void>;
}

/**
 * Starts the Langfuse fake and a gateway with `configYaml` (and `env`, added to the tracing variables) whose
 * traces go to it, flushed every 100 ms. Stops the fake again when the gateway fails to start.
 */
export async function startTracedGateway(
  configYaml: string,
  env: Record<string, string> = {},
): Promise<TracedGateway> {
  const langfuse = await startFakeLangfuse();
  let gw: TestGateway;
  try {
    gw = await startTestGateway(configYaml, { ...langfuseEnv(langfuse, 100), ...env });
  } catch (error) {
    await langfuse.close();
    throw error;
  }
  return {
    gw,
    langfuse,
    async close() {
      await gw.close();
      await langfuse.close();
    },
  };
}
