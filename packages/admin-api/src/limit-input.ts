/**
 * The limits a person types into the key console (a key's or a user's budget, budget period, requests and
 * tokens per minute), with the rules and messages the console shows. The browser checks the form with these
 * schemas before sending and the console's server checks the request body with the same ones, so both refuse
 * alike and in the same words. Stricter than the gateway's own {@link limitFields} (which accept 0, LiteLLM's
 * "block every call"): a limit typed here is never 0, never negative, never a fraction where a count is meant,
 * never an amount that shows as $0.00, and never silently changed into one of those.
 */
import { z } from "zod";
import { duration } from "./fields.js";

/** Largest budget the console accepts, USD. */
export const MAX_BUDGET_USD = 1_000_000;
/** Smallest budget the console accepts, USD: one cent (anything smaller shows, and acts, as $0.00). */
export const MIN_BUDGET_USD = 0.01;
/** Largest per-minute limit the console accepts (requests or tokens). */
export const MAX_PER_MINUTE = 1_000_000_000;

/** A budget typed into the console: USD, at least one cent, at most {@link MAX_BUDGET_USD}. */
export const budgetInput = z
  .number({ error: "Enter an amount in US dollars, e.g. 25 or 0.50." })
  .refine((v) => v >= 0, { error: "A budget cannot be negative." })
  .refine((v) => v < 0 || v >= MIN_BUDGET_USD, {
    error:
      "A budget must be at least $0.01 (a smaller one would refuse every call). Leave it empty for none.",
  })
  .refine((v) => v <= MAX_BUDGET_USD, { error: "A budget can be at most $1,000,000." });

/** A per-minute limit typed into the console: a whole number from 1 to {@link MAX_PER_MINUTE}. */
export function perMinuteInput(what: "Requests" | "Tokens") {
  return z
    .number({ error: `Enter a whole number of ${what.toLowerCase()}, e.g. 60.` })
    .refine((v) => Number.isInteger(v), {
      error: `${what} per minute must be a whole number.`,
    })
    .refine((v) => !Number.isInteger(v) || v >= 1, {
      error: `${what} per minute must be at least 1 (0 would refuse every call). Leave it empty for no limit.`,
    })
    .refine((v) => v <= MAX_PER_MINUTE, { error: `${what} per minute can be at most 1,000,000,000.` });
}

/**
 * The four limit fields as the console sends them (LiteLLM's names): each omitted (unchanged, or the
 * default), null (none: the owner's limits apply) or a valid value; a budget period needs a budget.
 */
export const limitInputFields = {
  max_budget: budgetInput.nullish(),
  budget_duration: duration.nullish(),
  rpm_limit: perMinuteInput("Requests").nullish(),
  tpm_limit: perMinuteInput("Tokens").nullish(),
};

/** The message for a budget period without a budget. */
export const PERIOD_WITHOUT_BUDGET = "A budget period needs a budget: enter an amount or choose no period.";

/**
 * Refuses a budget period without a budget (the period would be dropped silently otherwise): for an object
 * schema holding {@link limitInputFields}; the issue names `budget_duration`.
 */
export function withBudgetForPeriod<
  S extends z.ZodType<{ max_budget?: number | null; budget_duration?: string | null }>,
>(schema: S) {
  return schema.refine((v) => v.budget_duration == null || v.max_budget != null, {
    error: PERIOD_WITHOUT_BUDGET,
    path: ["budget_duration"],
  });
}

/** The limit fields alone, as the console's limits dialog sends them. */
export const limitInput = withBudgetForPeriod(z.object(limitInputFields));
export type LimitInput = z.input<typeof limitInput>;

/**
 * What a person typed into a number field, as a number for the schemas above: "" (blank) is null; plain
 * decimal text (`25`, `-3`, `0.5`, `.5`, `1,000`) is its value; anything else (`1e308`, `0x10`, `abc`) is NaN,
 * which the schemas refuse. The text is never rounded, clamped or otherwise changed.
 */
export function typedNumber(text: string): number | null {
  const plain = text.trim().replace(/(\d),(?=\d{3}(\D|$))/g, "$1");
  if (plain === "") return null;
  return /^-?(\d+(\.\d*)?|\.\d+)$/.test(plain) ? Number(plain) : Number.NaN;
}

/** The first refusal of `data` by `schema` per field (`max_budget` → message); empty when valid. */
export function fieldErrors(schema: z.ZodType, data: unknown): Record<string, string> {
  const result = schema.safeParse(data);
  const errors: Record<string, string> = {};
  if (result.success) return errors;
  for (const issue of result.error.issues) {
    const field = issue.path.map(String).join(".");
    errors[field] ??= issue.message;
  }
  return errors;
}
