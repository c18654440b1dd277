import { Card, SimpleGrid, Text } from "@mantine/core";
import type { CachingSavings } from "../api";
import { count, usd } from "../format";
import { Stat } from "./UsageStats";

/**
 * Prompt caching over the period: the input tokens read from the provider's prompt cache (and their share of
 * all input tokens) and what that saved, with what the figure means written out under it (no hovering).
 */
export function CachingStats({ caching, promptTokens }: { caching: CachingSavings; promptTokens: number }) {
  const share = promptTokens > 0 ? Math.round((caching.cached_tokens / promptTokens) * 100) : 0;
  return (
    <Card withBorder radius="md" padding="sm" data-testid="caching">
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Stat
          label="Cached input tokens"
          value={count(caching.cached_tokens)}
          note={`${share} % of input tokens`}
        />
        <Stat label="Saved by prompt caching" value={usd(caching.saved)} />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt="xs">
        Saved: what the cached input tokens would have cost as fresh input, minus what they cost at the
        provider's cached-input price (the gateway's prices). Writing to the cache can cost more than fresh
        input; that is in your spend, not taken off here.
        {caching.unpriced_tokens > 0 &&
          ` ${count(caching.unpriced_tokens)} cached tokens of a model no longer served are not priced.`}
      </Text>
    </Card>
  );
}
