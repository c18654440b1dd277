import { Alert } from "@mantine/core";
import type { UserRecord } from "../api";
import { budgetShare, budgetState, day, usd } from "../format";

/** Shown on every tab while the account has used 80 % of its budget or more ("exhausted" from 100 %). */
export function BudgetWarning({ account }: { account: UserRecord | null }) {
  if (account === null) return null;
  const state = budgetState(account.spend, account.max_budget);
  if (state === "ok") return null;
  const share = budgetShare(account.spend, account.max_budget) ?? 1;
  const exhausted = state === "exhausted";
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
      {exhausted ? "Calls are refused until then" : "Calls will be refused when it runs out"}, unless an
      administrator raises it.
    </Alert>
  );
}
