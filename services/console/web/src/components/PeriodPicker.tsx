import { SegmentedControl } from "@mantine/core";

/** 7, 30 or 90 days (the periods the usage endpoints offer), as text. */
export function PeriodPicker({ value, onChange }: { value: string; onChange: (days: string) => void }) {
  return (
    <SegmentedControl
      value={value}
      onChange={onChange}
      data={[
        { value: "7", label: "7 days" },
        { value: "30", label: "30 days" },
        { value: "90", label: "90 days" },
      ]}
      style={{ alignSelf: "flex-start" }}
    />
  );
}
