import { Alert } from "@mantine/core";
import { useEffect, useRef } from "react";

/**
 * A notice after an action (a key revoked, limits saved) that takes the focus, so that keyboard and screen
 * reader users are not left on the page's `<body>` when the control they used is gone, and is announced
 * (`role="status"`). Dismissed with its ×.
 */
export function Notice({
  title,
  children,
  onClose,
}: {
  title: string;
  children?: React.ReactNode;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new title is a new notice, focused again
  useEffect(() => {
    ref.current?.focus();
  }, [title]);
  return (
    <Alert
      ref={ref}
      tabIndex={-1}
      role="status"
      color="teal"
      title={title}
      withCloseButton
      closeButtonLabel="Dismiss"
      onClose={onClose}
      data-testid="notice"
    >
      {children}
    </Alert>
  );
}
