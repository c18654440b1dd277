import { Alert, Button, Card, Group, Loader, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { api, type ConsoleKey, type Me } from "../api";
import { GenerateKeyModal } from "../components/GenerateKeyModal";
import { useFetch } from "../useFetch";
import { KeyTable } from "./KeyTable";

/** API keys: the user's keys, generate and revoke. */
export function KeysTab({ me, onChange }: { me: Me; onChange: () => void }) {
  const keys = useFetch<{ keys: ConsoleKey[] }>("/api/keys");
  const [generating, setGenerating] = useState(false);
  const revoke = async (key: ConsoleKey) => {
    await api("DELETE", `/api/keys/${key.token}`);
    keys.reload();
    onChange();
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Text size="sm" c="dimmed" maw={560}>
          Keys for your own programs. One key per app is best; a lost key cannot be recovered: revoke it and
          generate a new one. Never commit keys to a repository.
        </Text>
        <Button onClick={() => setGenerating(true)} disabled={me.account === null}>
          Generate key
        </Button>
      </Group>
      {keys.error !== null && <Alert color="red">{keys.error}</Alert>}
      <Card withBorder radius="md" p={0}>
        {keys.data === null ? (
          <Loader size="sm" m="md" />
        ) : keys.data.keys.length === 0 ? (
          <Text c="dimmed" ta="center" py="xl">
            No keys yet.
          </Text>
        ) : (
          <KeyTable keys={keys.data.keys} onRevoke={revoke} />
        )}
      </Card>
      <GenerateKeyModal
        me={me}
        opened={generating}
        onClose={(created) => {
          setGenerating(false);
          if (created) {
            keys.reload();
            onChange();
          }
        }}
      />
    </Stack>
  );
}
