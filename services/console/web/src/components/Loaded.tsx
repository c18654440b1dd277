import { Alert, Button, Group, Loader, Text } from "@mantine/core";
import type { ReactNode } from "react";

/** What {@link Loaded} needs of a `useFetch` result. */
export interface LoadResult<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Renders `children(data)` once loaded; while loading a spinner; after a failed load the error with a Retry
 * button (never a spinner that keeps turning). Data from an earlier load stays shown under the error.
 */
export function Loaded<T>({
  result,
  what,
  children,
}: {
  result: LoadResult<T>;
  /** What was loading, for the error title ("your keys"). */
  what: string;
  children: (data: T) => ReactNode;
}) {
  const { data, error, loading, reload } = result;
  return (
    <>
      {error !== null && (
        <Alert color="red" title={`Could not load ${what}`} m="xs">
          <Group justify="space-between" wrap="nowrap" gap="sm">
            <Text size="sm">{error}</Text>
            <Button size="xs" variant="default" onClick={reload} loading={loading}>
              Retry
            </Button>
          </Group>
        </Alert>
      )}
      {data !== null ? children(data) : error === null && loading ? <Loader size="sm" m="md" /> : null}
    </>
  );
}
