import { Card, Group, SimpleGrid, Table, Text } from "@mantine/core";
import { type ReactNode, useId } from "react";
import type { UsageResponse, UsageTotals } from "../api";
import { count, reasonLabel, usd } from "../format";
import { ColumnHeads } from "./ColumnHeads";

/** `by_reason` of the gateway's `/spend/usage`: failed calls per reason, refusals marked. */
type ByReason = UsageResponse["by_reason"];

/**
 * Spend, requests, input and output tokens of a period, as four figures (and `extra` ones after them); under the
 * requests, how many were answered, refused (by a budget, a rate limit, a guardrail, a model the key may not
 * call: `refused_requests`) and failed otherwise (the provider's error, or the client left).
 */
export function UsageStats({ totals, extra }: { totals: UsageTotals; extra?: ReactNode }) {
  const answered = totals.requests - totals.failed_requests;
  const failed = totals.failed_requests - totals.refused_requests;
  return (
    <SimpleGrid cols={{ base: 2, sm: extra === undefined ? 4 : 5 }}>
      <Stat label="Spend" value={usd(totals.spend)} />
      <Stat
        label="Requests"
        value={count(totals.requests)}
        note={`${count(answered)} answered · ${count(totals.refused_requests)} refused · ${count(failed)} failed`}
        testId="requests-stat"
      />
      <Stat label="Input tokens" value={count(totals.prompt_tokens)} />
      <Stat label="Output tokens" value={count(totals.completion_tokens)} />
      {extra}
    </SimpleGrid>
  );
}

/**
 * How many of the period's calls were refused, and why: "2 calls refused in these 7 days: budget 1, rate limit 1"
 * (the reasons of refusals only), or that none was. `period`: the period in words ("in these 7 days").
 */
export function RefusedCalls({
  totals,
  byReason,
  period,
}: {
  totals: UsageTotals;
  byReason: ByReason;
  period: string;
}) {
  const refused = totals.refused_requests;
  const reasons = byReason
    .filter((r) => r.refused && r.reason !== null)
    .map((r) => `${reasonLabel(r.reason as string)} ${count(r.requests)}`);
  return (
    <Text size="sm" c={refused > 0 ? "var(--mantine-color-error)" : "dimmed"} data-testid="refused-calls">
      {refused === 0
        ? `No call refused ${period}.`
        : `${count(refused)} ${refused === 1 ? "call" : "calls"} refused ${period}${reasons.length > 0 ? `: ${reasons.join(", ")}` : ""}.`}
    </Text>
  );
}

/**
 * The period's refused and failed calls by reason (budget, rate limit, guardrail, provider error, …), refusals
 * first, each with its share of all requests; a line saying there were none when every call was answered.
 */
export function CallsByReason({ totals, byReason }: { totals: UsageTotals; byReason: ByReason }) {
  const rows = [...byReason].sort((a, b) => Number(b.refused) - Number(a.refused) || b.requests - a.requests);
  const share = (n: number) =>
    totals.requests > 0 ? `${((n / totals.requests) * 100).toFixed(1)}\u00a0%` : "—";
  const titleId = useId();
  return (
    <Card withBorder radius="md" padding="sm" data-testid="calls-by-reason">
      <Text size="sm" c="dimmed" mb="xs" id={titleId}>
        Refused and failed calls by reason
      </Text>
      {rows.length === 0 ? (
        <Text size="sm" c="dimmed">
          Every call in this period was answered.
        </Text>
      ) : (
        <Table aria-labelledby={titleId}>
          <ColumnHeads
            columns={[
              "Reason",
              "Outcome",
              { label: "Requests", right: true },
              { label: "Share", right: true },
            ]}
          />
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={`${r.refused}-${r.reason ?? "none"}`}>
                <Table.Th scope="row" fw={400}>
                  {r.reason === null ? "not recorded" : reasonLabel(r.reason)}
                </Table.Th>
                <Table.Td>{r.refused ? "Refused" : "Failed"}</Table.Td>
                <Table.Td ta="right">{count(r.requests)}</Table.Td>
                <Table.Td ta="right">{share(r.requests)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}

/** A labelled number, with a line of `note` under it when given. */
export function Stat({
  label,
  value,
  note,
  testId,
}: {
  label: string;
  value: string;
  note?: string;
  testId?: string;
}) {
  return (
    <Card withBorder radius="md" padding="sm" data-testid={testId}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Group>
        <Text fw={700} size="lg">
          {value}
        </Text>
      </Group>
      {note !== undefined && (
        <Text size="xs" c="dimmed">
          {note}
        </Text>
      )}
    </Card>
  );
}

/**
 * A saving over the period as a card: how much was served from a cache (`part` of `whole`, with its share in
 * percent of `wholeName`), what that saved (USD), and what the figure means (`note`), with nothing to hover.
 */
export function SavingCard({
  testId,
  served,
  saved,
  note,
}: {
  testId: string;
  served: { label: string; part: number; whole: number; wholeName: string };
  saved: { label: string; usd: number };
  note: ReactNode;
}) {
  const share = served.whole > 0 ? Math.round((served.part / served.whole) * 100) : 0;
  return (
    <Card withBorder radius="md" padding="sm" data-testid={testId}>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Stat label={served.label} value={count(served.part)} note={`${share} % of ${served.wholeName}`} />
        <Stat label={saved.label} value={usd(saved.usd)} />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt="xs">
        {note}
      </Text>
    </Card>
  );
}
