import { Select, type SelectProps } from "@mantine/core";

/**
 * A dropdown that always has one choice (Mantine's `Select` with `allowDeselect={false}`): a role, a status
 * filter, a sort order, a budget period. Takes `Select`'s props.
 */
export function PickOne(props: Omit<SelectProps, "allowDeselect">) {
  return <Select {...props} allowDeselect={false} />;
}
