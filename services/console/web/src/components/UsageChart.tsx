import { Paper, Text } from "@mantine/core";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { UsageTotals } from "../api";
import { chartDay, count, usd } from "../format";

/** Spend per UTC day as bars (requests and tokens in the tooltip). */
export function UsageChart({
  daily,
  height = 220,
}: {
  daily: Array<UsageTotals & { date: string }>;
  height?: number;
}) {
  const data = daily.map((d) => ({ ...d, label: chartDay(d.date) }));
  return (
    <Paper withBorder p="sm" radius="md" role="figure" aria-label="Spend per day (USD)">
      <Text size="sm" c="dimmed" mb="xs">
        Spend per day (USD)
      </Text>
      <ResponsiveContainer width="100%" height={height}>
        <BarChart data={data} margin={{ top: 5, right: 10, left: 0, bottom: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          {/* Evenly spaced ticks, as many as fit without overlapping (7 days on a phone did overlap). */}
          <XAxis dataKey="label" fontSize={11} interval="equidistantPreserveStart" minTickGap={12} />
          <YAxis
            fontSize={11}
            width={64}
            tickCount={5}
            domain={[0, "auto"]}
            tickFormatter={(v: number) => usd(v)}
          />
          <Tooltip
            formatter={(value) => usd(Number(value))}
            labelFormatter={(label, payload) => {
              const row = payload?.[0]?.payload as (UsageTotals & { date: string }) | undefined;
              return row === undefined
                ? String(label)
                : `${chartDay(row.date)}: ${count(row.requests)} requests, ${count(row.total_tokens)} tokens`;
            }}
          />
          <Bar dataKey="spend" name="spend" fill="#1971c2" radius={[3, 3, 0, 0]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </Paper>
  );
}
