import { Alert } from "@mantine/core";
import type { UserRecord } from "../api";
import { budgetShare, budgetState, day, usd } from "../format";

/** From this share of the budget on, the banner says that calls are being refused now (most calls cost more than what is left). */
export const REFUSING_SHARE = 0.95;

/**
 * Shown on every tab while the account has used 80 % of its budget or more ("exhausted" from 100 %). Its
 * wording follows the gateway (docs/limits.md): a call is admitted only when the budget left covers the
 * call's estimate (its input and its maximum output), so calls are refused before the last cent is spent:
 * from {@link REFUSING_SHARE} on it says they are being refused now.
 */
export function BudgetWarning({ account }: { account: UserRecord | null }) {
  if (account === null) return null;
  const state = budgetState(account.spend, account.max_budget);
  if (state === "ok") return null;
  const share = budgetShare(account.spend, account.max_budget) ?? 1;
  const exhausted = state === "exhausted";
  const left = Math.max(0, (account.max_budget ?? 0) - account.spend);
  return (
    <Alert
      color={exhausted ? "red" : "orange"}
      title={exhausted ? "Budget exhausted" : "Budget almost used up"}
      data-testid="budget-warning"
      mb="md"
    >
      You have used {usd(account.spend)} of your {usd(account.max_budget ?? 0)} budget (
      {Math.round(share * 100)} %).
      {account.budget_reset_at !== null && ` It resets on ${day(account.budget_reset_at)}.`}{" "}
      {exhausted
        ? "Calls are refused until then"
        : share >= REFUSING_SHARE
          ? `Calls are being refused now when their estimated cost (their input and their maximum output) is more than the ${usd(left)} left`
          : "A call is refused as soon as what is left cannot cover its estimated cost (its input and its maximum output), which can happen before the budget is all spent"}
      , unless an administrator raises it.
    </Alert>
  );
}
