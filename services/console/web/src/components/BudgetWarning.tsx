import { Alert } from "@mantine/core";
import type { UserRecord } from "../api";
import { BUDGET_WARNING_SHARE, budgetShare, day, usd } from "../format";

/** Shown on every tab while the account has used more than 80 % of its budget. */
export function BudgetWarning({ account }: { account: UserRecord | null }) {
  if (account === null) return null;
  const share = budgetShare(account.spend, account.max_budget);
  if (share === null || share <= BUDGET_WARNING_SHARE) return null;
  const exhausted = share >= 1;
  return (
    <Alert
      color={exhausted ? "red" : "orange"}
      title={exhausted ? "Budget used up" : "Budget almost used up"}
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
