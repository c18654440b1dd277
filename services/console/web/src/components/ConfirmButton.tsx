import { Button, Group, Modal, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { type ReactNode, useState } from "react";

/**
 * A red button that asks first (revoke a key, remove a member, delete a team): a dialog with `question` as its
 * title, `children` as the explanation, Cancel and `label`. A failure shows in the dialog; after success the
 * focus is not returned to the button (it is usually gone; the caller's notice takes the focus).
 */
export function ConfirmButton({
  label,
  ariaLabel,
  question,
  children,
  onConfirm,
  color = "red",
}: {
  /** The button's and the confirming button's text ("Revoke", "Remove"). */
  label: string;
  /** The button's accessible name, naming what it acts on ("Revoke laptop (sk-…abcd)"). */
  ariaLabel: string;
  question: string;
  children: ReactNode;
  onConfirm: () => Promise<void>;
  /** The buttons' Mantine colour (default red: the action is destructive). */
  color?: string;
}) {
  const [opened, { open, close }] = useDisclosure(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setDone(true);
      close();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button size="xs" color={color} variant="light" onClick={open} aria-label={ariaLabel}>
        {label}
      </Button>
      <Modal opened={opened} onClose={close} title={question} centered returnFocus={!done}>
        <Text size="sm">{children}</Text>
        {error !== null && (
          <Text c="red" size="sm" mt="sm">
            {error}
          </Text>
        )}
        <Group justify="flex-end" mt="lg">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color={color} onClick={confirm} loading={busy}>
            {label}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
