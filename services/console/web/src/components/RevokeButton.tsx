import { Button, Group, Modal, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useState } from "react";

/** A "Revoke" button that asks first; revoking is terminal. */
export function RevokeButton({ label, onRevoke }: { label: string; onRevoke: () => Promise<void> }) {
  const [opened, { open, close }] = useDisclosure(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [revoked, setRevoked] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onRevoke();
      setRevoked(true);
      close();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button size="xs" color="red" variant="light" onClick={open} aria-label={`Revoke ${label}`}>
        Revoke
      </Button>
      {/* Once revoked, no focus return (this button is gone); the caller's notice takes the focus. */}
      <Modal opened={opened} onClose={close} title="Revoke this key?" centered returnFocus={!revoked}>
        <Text size="sm">
          <b>{label}</b> stops working within seconds. This cannot be undone; programs using it need a new
          key.
        </Text>
        {error !== null && (
          <Text c="red" size="sm" mt="sm">
            {error}
          </Text>
        )}
        <Group justify="flex-end" mt="lg">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red" onClick={confirm} loading={busy}>
            Revoke
          </Button>
        </Group>
      </Modal>
    </>
  );
}
