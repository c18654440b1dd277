import { Alert, Button, Card, Container, PasswordInput, Stack, Text, Title } from "@mantine/core";
import { useState } from "react";
import { api } from "./api";

/** Operators without a chat account sign in with the gateway's master key. */
export function AdminLogin() {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api("POST", "/api/admin/login", { master_key: key });
      window.location.assign("/admin");
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  return (
    <Container size={420} py="xl" component="main">
      <Card withBorder radius="md" p="xl" mt="10vh">
        <form onSubmit={submit}>
          <Stack>
            <Title order={1} size="h3">
              Operator sign-in
            </Title>
            <Text size="sm" c="dimmed">
              For operators without a chat account: the gateway's master key (GATEWAY_MASTER_KEY) opens the
              Admin view. Chat users open the console from the chat's avatar menu instead.
            </Text>
            <PasswordInput
              label="Master key"
              value={key}
              onChange={(e) => setKey(e.currentTarget.value)}
              required
              autoComplete="off"
            />
            {error !== null && <Alert color="red">{error}</Alert>}
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
      </Card>
    </Container>
  );
}
