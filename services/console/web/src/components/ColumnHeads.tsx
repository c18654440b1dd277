import { Table, VisuallyHidden } from "@mantine/core";

/** One column heading: its text, right-aligned for numbers, hidden below a breakpoint (Mantine's `visibleFrom`). */
export interface ColumnHead {
  label: string;
  right?: boolean;
  visibleFrom?: "xs" | "sm" | "md";
}

/**
 * A table's header row: one `<th scope="col">` per column (a plain string: left-aligned, always shown) and, with
 * `actions`, a last column of row buttons named "Actions" for screen readers only (shown from `actions` width
 * when it is a breakpoint).
 */
export function ColumnHeads({
  columns,
  actions,
}: {
  columns: ReadonlyArray<string | ColumnHead>;
  actions?: true | ColumnHead["visibleFrom"];
}) {
  return (
    <Table.Thead>
      <Table.Tr>
        {columns.map((c) => {
          const head = typeof c === "string" ? { label: c } : c;
          return (
            <Table.Th
              key={head.label}
              scope="col"
              ta={head.right ? "right" : undefined}
              visibleFrom={head.visibleFrom}
            >
              {head.label}
            </Table.Th>
          );
        })}
        {actions !== undefined && (
          <Table.Th scope="col" visibleFrom={actions === true ? undefined : actions}>
            <VisuallyHidden>Actions</VisuallyHidden>
          </Table.Th>
        )}
      </Table.Tr>
    </Table.Thead>
  );
}
