import { Button, Card, Group, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { api, type ConsoleKey, type Me } from "../api";
import { EditKeyModal } from "../components/EditKeyModal";
import { GenerateKeyModal } from "../components/GenerateKeyModal";
import { Loaded } from "../components/Loaded";
import { Notice } from "../components/Notice";
import { useFetch } from "../useFetch";
import { KeyTable } from "./KeyTable";

/** API keys: the user's keys, generate, edit and revoke. */
export function KeysTab({ me, onChange }: { me: Me; onChange: () => void }) {
  const keys = useFetch<{ keys: ConsoleKey[] }>("/api/keys");
  const [generating, setGenerating] = useState(false);
  const [editing, setEditing] = useState<ConsoleKey | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const revoke = async (key: ConsoleKey) => {
    await api("DELETE", `/api/keys/${key.token}`);
    setNotice(`Key ${key.key_alias ?? ""} (${key.key_name}) revoked.`);
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
      {notice !== null && <Notice title={notice} onClose={() => setNotice(null)} />}
      <Card withBorder radius="md" p={0}>
        <Loaded result={keys} what="your keys">
          {(data) =>
            data.keys.length === 0 ? (
              <Stack align="center" gap="xs" py="xl" data-testid="first-key">
                <Text fw={600}>You have no keys yet</Text>
                <Text size="sm" c="dimmed" ta="center" maw={460}>
                  A key lets your own code call the AI gateway with any OpenAI client; its calls count against
                  your budget and show in Usage.
                </Text>
                <Button variant="light" onClick={() => setGenerating(true)} disabled={me.account === null}>
                  Generate your first key
                </Button>
              </Stack>
            ) : (
              <KeyTable keys={data.keys} onRevoke={revoke} onEdit={setEditing} />
            )
          }
        </Loaded>
      </Card>
      {editing !== null && (
        <EditKeyModal
          k={editing}
          path={`/api/keys/${editing.token}`}
          ceiling={me.account}
          onClose={(saved) => {
            if (saved) {
              setNotice(
                `Key ${editing.key_alias ?? editing.key_name} saved; the change applies to its next call.`,
              );
              keys.reload();
            }
            setEditing(null);
          }}
        />
      )}
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
