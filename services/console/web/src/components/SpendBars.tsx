import { Paper, Text } from "@mantine/core";
import { useId } from "react";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { count, roundTicks, usd } from "../format";
import { type ChartRow, ChartTable } from "./ChartTable";

/**
 * One bar per entry (models, or keys compared): spend (USD) on round ticks, with requests and tokens beside
 * each bar's name; named for screen readers, out of the Tab order, and the values in a table under it.
 */
export function SpendBars({ title, rows }: { title: string; rows: ChartRow[] }) {
  const ticks = roundTicks(Math.max(0, ...rows.map((r) => r.spend)), 3);
  const titleId = useId();
  const data = rows.map((r) => ({ ...r, name: `${r.label} · ${usd(r.spend)} · ${count(r.requests)} req` }));
  return (
    <Paper withBorder p="sm" radius="md" component="figure" m={0} aria-labelledby={titleId}>
      <Text size="sm" c="dimmed" mb="xs" id={titleId} component="figcaption">
        {title}
      </Text>
      {rows.length === 0 ? (
        <Text size="sm" c="dimmed" py="lg" ta="center">
          No requests in this period.
        </Text>
      ) : (
        <>
          <div aria-hidden="true">
            <ResponsiveContainer width="100%" height={Math.max(120, rows.length * 44 + 40)}>
              <BarChart
                data={data}
                layout="vertical"
                margin={{ top: 0, right: 16, left: 8, bottom: 0 }}
                accessibilityLayer={false}
                tabIndex={-1}
              >
                <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                <XAxis
                  type="number"
                  fontSize={11}
                  ticks={ticks}
                  domain={[0, ticks.at(-1) ?? 1]}
                  tickFormatter={(v: number) => usd(v)}
                />
                <YAxis type="category" dataKey="name" fontSize={11} width={150} />
                <Tooltip
                  formatter={(value, name) => (name === "spend" ? usd(Number(value)) : count(Number(value)))}
                />
                <Bar dataKey="spend" fill="#1971c2" radius={[0, 4, 4, 0]} isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          </div>
          <ChartTable title={title} rows={rows} />
        </>
      )}
    </Paper>
  );
}
