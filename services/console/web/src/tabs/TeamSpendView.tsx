import { Group, SimpleGrid, Stack, Text } from "@mantine/core";
import type { TeamSpend } from "../api";
import { Loaded } from "../components/Loaded";
import { PeriodPicker } from "../components/PeriodPicker";
import { SpendBars } from "../components/SpendBars";
import { UsageStats } from "../components/UsageStats";
import { useFetch } from "../useFetch";

/** How the spend of a team's service keys (keys of no member) is labelled. */
const SERVICE_LABEL = "Service keys";

/** A team's spend over 7, 30 or 90 days: totals, and bars (with tables) by member, key and model. */
export function TeamSpendView({
  teamId,
  days,
  onDays,
}: {
  teamId: string;
  /** The period, days as text ("7", "30", "90"). */
  days: string;
  onDays: (days: string) => void;
}) {
  const spend = useFetch<TeamSpend>(`/api/teams/${encodeURIComponent(teamId)}/spend?days=${days}`);
  return (
    <Stack>
      <Group justify="space-between">
        <Text fw={600}>Team spend</Text>
        <PeriodPicker value={days} onChange={onDays} />
      </Group>
      <Loaded result={spend} what="the team's spend">
        {(data) => (
          <>
            <UsageStats totals={data.totals} />
            <SimpleGrid cols={{ base: 1, md: 3 }}>
              <SpendBars
                title="Spend by member"
                rows={data.by_member.map((m) => ({
                  ...m,
                  label: m.user_email ?? m.user_id ?? SERVICE_LABEL,
                }))}
              />
              <SpendBars
                title="Spend by key"
                rows={data.by_key.map((k) => ({ ...k, label: `${k.key_alias ?? ""} ${k.key_name}`.trim() }))}
              />
              <SpendBars title="Spend by model" rows={data.by_model.map((m) => ({ ...m, label: m.model }))} />
            </SimpleGrid>
          </>
        )}
      </Loaded>
    </Stack>
  );
}
