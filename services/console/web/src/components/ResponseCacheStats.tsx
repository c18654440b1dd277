import { Card, SimpleGrid, Text } from "@mantine/core";
import type { UsageTotals } from "../api";
import { count, usd } from "../format";
import { Stat } from "./UsageStats";

/**
 * The gateway's response cache over the period (docs/cache.md): requests answered from it (and their share of all
 * requests) and what those answers would have cost; shown only when the period has a hit.
 */
export function ResponseCacheStats({ totals }: { totals: UsageTotals }) {
  if (totals.cache_hits === 0) return null;
  const share = totals.requests > 0 ? Math.round((totals.cache_hits / totals.requests) * 100) : 0;
  return (
    <Card withBorder radius="md" padding="sm" data-testid="response-cache">
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Stat
          label="Answered from the gateway's cache"
          value={count(totals.cache_hits)}
          note={`${share} % of requests`}
        />
        <Stat label="Saved by the response cache" value={usd(totals.cache_saved_spend)} />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt="xs">
        A cached answer costs nothing: saved is what the same calls cost when they were first answered.
      </Text>
    </Card>
  );
}
