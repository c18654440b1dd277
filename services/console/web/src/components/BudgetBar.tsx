import { Badge, Progress } from "@mantine/core";
import { type BudgetState, budgetShare, budgetState, budgetUsed } from "../format";

const COLORS: Record<BudgetState, string> = { ok: "blue", warning: "orange", exhausted: "red" };

/**
 * A budget's share used as a bar (blue, orange from 80 %, red when exhausted) and, from 80 % on, a badge
 * saying the same ("85 % of budget used", "budget exhausted"). Nothing for an unlimited budget.
 */
export function BudgetBar({
  spend,
  maxBudget,
  size = "md",
  testId,
}: {
  /** USD spent in the budget's period. */
  spend: number;
  /** USD; null = unlimited. */
  maxBudget: number | null;
  size?: "xs" | "md";
  /** `data-testid` of the badge. */
  testId: string;
}) {
  const share = budgetShare(spend, maxBudget);
  if (share === null) return null;
  const state = budgetState(spend, maxBudget);
  return (
    <>
      <Progress
        mt={size === "xs" ? 4 : "xs"}
        size={size}
        maw={size === "xs" ? 160 : undefined}
        aria-label={`Budget used: ${Math.round(share * 100)} %`}
        value={Math.min(100, share * 100)}
        color={COLORS[state]}
      />
      {state !== "ok" && (
        <Badge
          mt={4}
          color={COLORS[state]}
          variant="light"
          c="var(--console-on-light)"
          tt="none"
          size={size === "xs" ? "sm" : "md"}
          data-testid={testId}
          data-state={state}
        >
          {budgetUsed(spend, maxBudget)}
        </Badge>
      )}
    </>
  );
}
