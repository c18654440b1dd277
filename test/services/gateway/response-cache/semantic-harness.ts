/**
 * The semantic cache suites' stack: the OpenAI-compatible fake (chat), the embeddings contract fake with
 * bag-of-words vectors (near-duplicate questions are measurably near, different ones far), the embedded PGlite
 * database (which loads pgvector; the machine's Postgres has none) and a cached gateway (`harness.ts`) with
 * `type: postgres-semantic` over the embedding alias `embed`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  EMBEDDED_POOL_MAX,
  type EmbeddedDatabase,
  startEmbeddedDatabase,
} from "../../../../services/gateway/src/db/embedded.js";
import type { GatewayOptions } from "../../../../services/gateway/src/gateway.js";
import {
  type FakeEmbeddingsCompletions,
  startFakeEmbeddingsCompletions,
} from "../../../fixtures/openai-embeddings-completions.js";
import { type FakeUpstream, startFakeUpstream } from "../../../fixtures/openai-upstream.js";
import { deployment, type TestGateway } from "../../../helpers/gateway.js";
import { deleteKeys, uniquePrefix } from "../../../helpers/redis.js";
import { startCachedGateway } from "./harness.js";

/** PGlite creates its database (initdb in WebAssembly) on the first open: seconds, far more on a loaded machine. */
export const SLOW = { timeout: 240_000 };

/** The embedding model's `model_list` entry (`embed`, `mode: embedding`) at `url`. */
export const embedModel = (url: string) =>
  `${deployment("embed", url)}    model_info:\n      mode: embedding\n`;

/** `cache_params` of the semantic cache (threshold 0.9, embedding alias `embed`). */
export const SEMANTIC_PARAMS =
  "    type: postgres-semantic\n    ttl: 120\n    similarity_threshold: 0.9\n    semantic_cache_embedding_model: embed\n";

/** A started stack; `close` stops everything and deletes its files and Redis keys. */
export interface SemanticStack {
  upstream: FakeUpstream;
  embeddings: FakeEmbeddingsCompletions;
  embedded: EmbeddedDatabase;
  gw: TestGateway;
  /** The Redis key prefix of the gateway's limits and exact entries. */
  prefix: string;
  close(): Promise<void>;
}

/**
 * Starts the stack; `policy`: GUARDRAIL_POLICY's YAML (the harness's e-mail masking by default); `semanticSweep`:
 * the sweeper's tuning (every minute by default).
 */
export async function startSemanticStack(
  name: string,
  policy?: string,
  semanticSweep?: GatewayOptions["semanticSweep"],
): Promise<SemanticStack> {
  const upstream = await startFakeUpstream();
  const embeddings = await startFakeEmbeddingsCompletions({ bagOfWordsDimensions: 256 });
  const folder = mkdtempSync(join(tmpdir(), `gw-${name}-`));
  const embedded = await startEmbeddedDatabase(join(folder, "postgres"));
  const prefix = uniquePrefix(name);
  const gw = await startCachedGateway(upstream, {
    databaseUrl: embedded.url,
    prefix,
    poolMax: EMBEDDED_POOL_MAX,
    moreModels: embedModel(embeddings.url),
    cacheParams: SEMANTIC_PARAMS,
    ...(policy === undefined ? {} : { policy }),
    ...(semanticSweep === undefined ? {} : { semanticSweep }),
  });
  return {
    upstream,
    embeddings,
    embedded,
    gw,
    prefix,
    async close() {
      await gw.close();
      await embedded.close();
      await upstream.close();
      await embeddings.close();
      await deleteKeys(prefix);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
