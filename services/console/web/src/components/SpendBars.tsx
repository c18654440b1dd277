import { Paper, Text } from "@mantine/core";
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { count, usd } from "../format";

/** One bar per entry: spend (USD) and requests side by side (models, or keys compared). */
export function SpendBars({
  title,
  rows,
}: {
  title: string;
  rows: Array<{ label: string; spend: number; requests: number; total_tokens: number }>;
}) {
  return (
    <Paper withBorder p="sm" radius="md">
      <Text size="sm" c="dimmed" mb="xs">
        {title}
      </Text>
      {rows.length === 0 ? (
        <Text size="sm" c="dimmed" py="lg" ta="center">
          No requests in this period.
        </Text>
      ) : (
        <ResponsiveContainer width="100%" height={Math.max(120, rows.length * 44 + 40)}>
          <BarChart data={rows} layout="vertical" margin={{ top: 0, right: 16, left: 8, bottom: 0 }}>
            <CartesianGrid strokeDasharray="3 3" horizontal={false} />
            <XAxis
              type="number"
              fontSize={11}
              tickCount={4}
              domain={[0, "auto"]}
              tickFormatter={(v: number) => usd(v)}
            />
            <YAxis type="category" dataKey="label" fontSize={11} width={110} />
            <Tooltip
              formatter={(value, name) => (name === "spend" ? usd(Number(value)) : count(Number(value)))}
            />
            <Bar dataKey="spend" fill="#1971c2" radius={[0, 4, 4, 0]} isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      )}
    </Paper>
  );
}
