import { ConfirmButton } from "./ConfirmButton";

/** A "Revoke" button that asks first; revoking is terminal. */
export function RevokeButton({ label, onRevoke }: { label: string; onRevoke: () => Promise<void> }) {
  return (
    <ConfirmButton
      label="Revoke"
      ariaLabel={`Revoke ${label}`}
      question="Revoke this key?"
      onConfirm={onRevoke}
    >
      <b>{label}</b> stops working within seconds. This cannot be undone; programs using it need a new key.
    </ConfirmButton>
  );
}
