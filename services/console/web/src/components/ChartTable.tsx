import { Table, Text } from "@mantine/core";
import { count, usd } from "../format";
import { ColumnHeads } from "./ColumnHeads";

/** One row of a chart's values: its label, spend (USD), requests and tokens. */
export interface ChartRow {
  label: string;
  spend: number;
  requests: number;
  total_tokens: number;
}

/**
 * A chart's values as a table, folded under "Show as a table" (a native `<details>`, so keyboards and screen
 * readers reach it without the chart): what the chart shows, readable without hovering.
 */
export function ChartTable({ title, rows }: { title: string; rows: ChartRow[] }) {
  return (
    <details>
      <summary>
        <Text span size="sm">
          Show as a table
        </Text>
      </summary>
      <Table.ScrollContainer
        minWidth={300}
        type="native"
        // In a narrow column it scrolls sideways: a keyboard then reaches the columns out of sight.
        tabIndex={0}
        role="region"
        aria-label={`${title} (table)`}
      >
        <Table>
          <caption style={{ captionSide: "top", textAlign: "left" }}>{title}</caption>
          <ColumnHeads
            columns={[
              "Day or name",
              { label: "Spend", right: true },
              { label: "Requests", right: true },
              { label: "Tokens", right: true },
            ]}
          />
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={r.label}>
                <Table.Th scope="row" fw={400}>
                  {r.label}
                </Table.Th>
                <Table.Td ta="right">{usd(r.spend)}</Table.Td>
                <Table.Td ta="right">{count(r.requests)}</Table.Td>
                <Table.Td ta="right">{count(r.total_tokens)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </details>
  );
}
