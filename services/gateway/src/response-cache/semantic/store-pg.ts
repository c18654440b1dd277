/**
 * The semantic cache's store: rows of `semantic_cache_entries` (migration 14, pgvector's `vector` type) in the
 * gateway's Postgres. A lookup takes, among the live rows of one filter key (everything that must match exactly,
 * the scope included), the nearest by cosine distance (pgvector's `<=>`) and answers it when its cosine
 * similarity (1 − distance) reaches the threshold. Each embedding dimension has its HNSW index (cosine ops,
 * migration 15), which the planner uses where a filter key has many rows. Like the exact stores it never throws: a failing query is a
 * miss or a dropped write (logged).
 */
import type { FastifyBaseLogger } from "fastify";
import type pg from "pg";
import type { CachedAnswer } from "../types.js";

/** A semantic hit: the stored answer and how similar its prompt is (cosine similarity, 0..1). */
export interface SemanticMatch {
  entry: CachedAnswer;
  similarity: number;
}

/** pgvector's text form of a vector: `[0.1,0.2,…]`. */
const toVector = (values: readonly number[]) => `[${values.join(",")}]`;

/** A vector's dimension as an SQL integer literal. @throws RangeError for an empty vector (no embedding). */
function dimensionsOf(vector: readonly number[]): number {
  if (!Number.isSafeInteger(vector.length) || vector.length < 1) throw new RangeError("an empty embedding");
  return vector.length;
}

/**
 * The lookup's SQL for `dims`-dimension embeddings (`$1` the filter key, `$2` the vector's text form): the
 * nearest live row by cosine distance. The dimension is written into the SQL (an integer: a type modifier
 * cannot be a parameter) so that the planner can use that dimension's partial HNSW index (migration 15).
 */
export function nearestSql(dims: number): string {
  return `SELECT entry, 1 - (embedding::vector(${dims}) <=> $2::vector(${dims})) AS similarity
            FROM semantic_cache_entries
           WHERE filter_key = $1 AND expires_at > now() AND vector_dims(embedding) = ${dims}
           ORDER BY embedding::vector(${dims}) <=> $2::vector(${dims})
           LIMIT 1`;
}

/** The semantic store on Postgres with pgvector. */
export class PgSemanticStore {
  /** Dimensions whose HNSW index this process made sure of (once each). */
  private readonly indexed = new Set<number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * The nearest live entry of `filterKey` whose cosine similarity to `vector` is at least `threshold` (0..1).
   * Entries of another dimension (an embedding model that changed) are skipped.
   */
  async nearest(
    filterKey: string,
    vector: readonly number[],
    threshold: number,
  ): Promise<SemanticMatch | undefined> {
    try {
      const result = await this.pool.query<{ entry: CachedAnswer; similarity: number }>(
        nearestSql(dimensionsOf(vector)),
        [filterKey, toVector(vector)],
      );
      const row = result.rows[0];
      if (row === undefined || Number(row.similarity) < threshold) return undefined;
      return { entry: row.entry, similarity: Number(row.similarity) };
    } catch (error) {
      this.log.warn({ err: error }, "semantic cache lookup failed: answered as a miss");
      return undefined;
    }
  }

  /**
   * Stores `json` (a serialised CachedAnswer) with its prompt's `vector`, live for `ttlSeconds`, and deletes the
   * expired rows of the same filter key (so a table grows only with live entries of prompts asked again).
   */
  async set(
    filterKey: string,
    scope: string,
    vector: readonly number[],
    json: string,
    ttlSeconds: number,
  ): Promise<void> {
    await this.ensureIndex(vector.length);
    try {
      await this.pool.query(
        `INSERT INTO semantic_cache_entries (filter_key, scope, embedding, entry, expires_at)
         VALUES ($1, $2, $3::vector, $4::jsonb, now() + make_interval(secs => $5))`,
        [filterKey, scope, toVector(vector), json, ttlSeconds],
      );
      await this.pool.query(
        "DELETE FROM semantic_cache_entries WHERE filter_key = $1 AND expires_at <= now()",
        [filterKey],
      );
    } catch (error) {
      this.log.warn({ err: error }, "semantic cache write failed: the answer is not stored");
    }
  }

  /**
   * Creates the HNSW index of `dims`-dimension embeddings unless it exists (`semantic_cache_hnsw_index`,
   * migration 15), once per dimension and process. A failure (e.g. two instances creating it at once) is
   * logged and tried again at the next write; lookups work without the index, scanning the filter key's rows.
   */
  private async ensureIndex(dims: number): Promise<void> {
    if (this.indexed.has(dims)) return;
    try {
      await this.pool.query("SELECT semantic_cache_hnsw_index($1)", [dims]);
      this.indexed.add(dims);
    } catch (error) {
      this.log.warn({ err: error, dims }, "semantic cache: its HNSW index could not be created");
    }
  }
}
