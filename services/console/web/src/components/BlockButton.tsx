import { ConfirmButton } from "./ConfirmButton";

/**
 * A "Block" button (or "Unblock" for a blocked key) that asks first. A blocked key is refused by the gateway
 * (401) until unblocked; unlike revoking, blocking can be undone.
 */
export function BlockButton({
  label,
  blocked,
  onBlock,
}: {
  /** The key as the dialog names it: `alias (sk-…abcd)`. */
  label: string;
  /** Whether the key is blocked now: the button then unblocks it. */
  blocked: boolean;
  /** Blocks (`true`) or unblocks (`false`) the key; a rejection shows in the dialog. */
  onBlock: (blocked: boolean) => Promise<void>;
}) {
  const verb = blocked ? "Unblock" : "Block";
  return (
    <ConfirmButton
      label={verb}
      ariaLabel={`${verb} ${label}`}
      question={`${verb} this key?`}
      color={blocked ? "blue" : "red"}
      onConfirm={() => onBlock(!blocked)}
    >
      {blocked ? (
        <>
          <b>{label}</b> works again within seconds, with its limits and spend as before.
        </>
      ) : (
        <>
          <b>{label}</b> is refused within seconds until you unblock it. Its limits and spend are kept.
        </>
      )}
    </ConfirmButton>
  );
}
