import { Paper, Text } from "@mantine/core";
import { useId } from "react";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { UsageTotals } from "../api";
import { chartDay, count, roundTicks, todayUtc, usd } from "../format";
import { ChartTable } from "./ChartTable";

/**
 * Spend per UTC day as bars, today's labelled "Today", on round ticks; named for screen readers and out of
 * the Tab order (the same values are in the table under it; requests and tokens in the tooltip too).
 */
export function UsageChart({
  daily,
  height = 220,
}: {
  daily: Array<UsageTotals & { date: string }>;
  height?: number;
}) {
  const today = todayUtc();
  const data = daily.map((d) => ({ ...d, label: d.date === today ? "Today" : chartDay(d.date) }));
  const ticks = roundTicks(Math.max(0, ...daily.map((d) => d.spend)));
  const titleId = useId();
  return (
    <Paper withBorder p="sm" radius="md" component="figure" m={0} aria-labelledby={titleId}>
      <Text size="sm" c="dimmed" mb="xs" id={titleId} component="figcaption">
        Spend per day (USD, UTC days)
      </Text>
      <div aria-hidden="true">
        <ResponsiveContainer width="100%" height={height}>
          <BarChart
            data={data}
            margin={{ top: 5, right: 10, left: 0, bottom: 0 }}
            accessibilityLayer={false}
            tabIndex={-1}
          >
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {/* As many ticks as fit without overlapping, counted back from today's, which is always shown. */}
            <XAxis dataKey="label" fontSize={11} interval="preserveEnd" minTickGap={12} />
            <YAxis
              fontSize={11}
              width={72}
              ticks={ticks}
              domain={[0, ticks.at(-1) ?? 1]}
              tickFormatter={(v: number) => usd(v)}
            />
            <Tooltip
              formatter={(value) => usd(Number(value))}
              labelFormatter={(label, payload) => {
                const row = payload?.[0]?.payload as (UsageTotals & { date: string }) | undefined;
                return row === undefined
                  ? String(label)
                  : `${label}: ${count(row.requests)} requests, ${count(row.total_tokens)} tokens`;
              }}
            />
            <Bar
              dataKey="spend"
              name="spend"
              fill="#1971c2"
              radius={[3, 3, 0, 0]}
              isAnimationActive={false}
            />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <ChartTable title="Spend per day" rows={[...data].reverse()} />
    </Paper>
  );
}
