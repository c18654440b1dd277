import { SegmentedControl } from "@mantine/core";

/** 7, 30 or 90 days (the periods the usage endpoints offer), as text; with `range`, "Date range" too. */
export function PeriodPicker({
  value,
  onChange,
  range = false,
}: {
  value: string;
  onChange: (days: string) => void;
  range?: boolean;
}) {
  return (
    <SegmentedControl
      value={value}
      onChange={onChange}
      data={[
        { value: "7", label: "7 days" },
        { value: "30", label: "30 days" },
        { value: "90", label: "90 days" },
        ...(range ? [{ value: "range", label: "Date range" }] : []),
      ]}
      style={{ alignSelf: "flex-start" }}
    />
  );
}
