import { Group, SimpleGrid, Stack, Text } from "@mantine/core";
import { useState } from "react";
import type { ConsoleUsage, SpendLogRow } from "../api";
import { CachingStats } from "../components/CachingStats";
import { DownloadCsv } from "../components/DownloadCsv";
import { Loaded } from "../components/Loaded";
import { PeriodRange } from "../components/PeriodRange";
import { RecentRequests } from "../components/RecentRequests";
import { ResponseCacheStats } from "../components/ResponseCacheStats";
import { SpendBars } from "../components/SpendBars";
import { UsageChart } from "../components/UsageChart";
import { CallsByReason, UsageStats } from "../components/UsageStats";
import { useFetch } from "../useFetch";

/**
 * Usage: 7/30/90-day figures (answered, refused and failed calls apart), prompt caching and what it saved, the chart,
 * spend by model, keys compared, the period's requests with their status, 50 a page. The period: 7, 30 or 90
 * days, or a date range.
 */
export function UsageTab() {
  const [period, setPeriod] = useState("days=30");
  const usage = useFetch<ConsoleUsage>(`/api/usage?${period}`);
  const requests = useFetch<{ requests: SpendLogRow[]; truncated: boolean }>(`/api/usage/requests?${period}`);
  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <PeriodRange onChange={setPeriod} />
        <DownloadCsv href={`/api/usage/export.csv?${period}`} />
      </Group>
      <Loaded result={usage} what="your usage">
        {(data) => (
          <>
            <UsageStats totals={data.totals} />
            <Text size="xs" c="dimmed" data-testid="refusals-note">
              Refused: calls the gateway turned down (a budget, a rate limit, a guardrail, a model the key may
              not call); they cost nothing. Failed: the provider failed or timed out, or the client left. Both
              are listed below and in the CSV with their reason.
            </Text>
            <CallsByReason totals={data.totals} byReason={data.by_reason} />
            <CachingStats caching={data.caching} promptTokens={data.totals.prompt_tokens} />
            <ResponseCacheStats totals={data.totals} />
            <UsageChart daily={data.daily} height={260} />
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <SpendBars title="Spend by model" rows={data.by_model.map((m) => ({ ...m, label: m.model }))} />
              <SpendBars
                title="Keys compared (spend)"
                rows={data.by_key.map((k) => ({ ...k, label: k.key_alias ?? k.key_name ?? "master key" }))}
              />
            </SimpleGrid>
            <Loaded result={requests} what="your requests">
              {(list) => <RecentRequests key={period} requests={list.requests} truncated={list.truncated} />}
            </Loaded>
          </>
        )}
      </Loaded>
    </Stack>
  );
}
